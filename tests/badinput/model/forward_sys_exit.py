# case: sys.exit in forward
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*forward_sys_exit\.py:\d+: the model file called sys\.exit\(0\) during tracing forward\(\)
import torch
import torch.nn as nn
import sys

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        sys.exit(0)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
