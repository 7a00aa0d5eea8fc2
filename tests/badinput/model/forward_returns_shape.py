# case: forward returns x.shape[0] (a Python int)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*forward\(\) returned no tensor
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.shape[0]


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
