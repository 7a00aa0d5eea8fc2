# case: a normal model with --timeout 0 (no limit)
# run: analyze {file} --arch H100-SXM --json --timeout 0
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
