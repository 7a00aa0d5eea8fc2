# case: a buffer made on the GPU
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer('b', torch.ones(8, device='cuda'))

    def forward(self, x):
        return x + self.b


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
