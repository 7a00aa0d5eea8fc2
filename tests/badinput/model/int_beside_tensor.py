# case: an int beside a tensor in get_inputs
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, k):
        return x * k


def get_inputs():
    return [torch.randn(4, 8), 3]


def get_init_inputs():
    return []
