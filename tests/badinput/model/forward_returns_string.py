# case: forward returns a string
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*forward\(\) returned no tensor|torch\.export could not trace
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 'done'


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
