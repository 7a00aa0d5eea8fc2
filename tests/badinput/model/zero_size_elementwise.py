# case: elementwise ops on an empty tensor: nothing to compute or move (eager launches no kernel), a 0 bound
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: "seconds": 0\.0
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) + 1


def get_inputs():
    return [torch.randn(0, 8)]


def get_init_inputs():
    return []
