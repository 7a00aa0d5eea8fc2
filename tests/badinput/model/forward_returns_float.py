# case: forward returns a float (not a 0-FLOP success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*forward\(\) returned no tensor \(got float\)
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 3.5


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
