# case: the mean of an empty tensor
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean()


def get_inputs():
    return [torch.randn(0)]


def get_init_inputs():
    return []
