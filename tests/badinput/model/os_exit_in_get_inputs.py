# case: os._exit in get_inputs (trapped in-process)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*os_exit_in_get_inputs\.py:\d+: the model file called os\._exit\(0\) during get_inputs\(\)
import torch
import torch.nn as nn
import os

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


def get_inputs():
    os._exit(0)


def get_init_inputs():
    return []
