# case: os._exit(5) while forward() is traced
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*os_exit_in_forward\.py:\d+: the model file called os\._exit\(5\) during tracing forward\(\)
import torch
import torch.nn as nn
import os

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        os._exit(5)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
