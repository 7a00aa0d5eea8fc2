# case: forward returns None (not a 0-FLOP success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*forward_returns_none\.py: forward\(\) returned no tensor \(got NoneType\)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
