# case: get_inputs returns an arbitrary object
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs\(\) item 1 is a object, not a tensor
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x * 2


def get_inputs():
    return [torch.randn(4), object()]


def get_init_inputs():
    return []
