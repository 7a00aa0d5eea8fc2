# case: get_inputs returns a generator
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs\(\) item 0 is a generator, not a tensor
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


def get_inputs():
    return (torch.randn(4) for _ in range(1))


def get_init_inputs():
    return []
