# case: 0-d tensors
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * x + 1


def get_inputs():
    return [torch.tensor(3.0)]


def get_init_inputs():
    return []
