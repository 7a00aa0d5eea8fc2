# case: get_inputs returns strings (not a 0-FLOP success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs\(\) item 0 is a str, not a tensor
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x


def get_inputs():
    return ['hello']


def get_init_inputs():
    return []
