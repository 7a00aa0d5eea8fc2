# case: get_init_inputs raises
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_init_inputs\(\) failed: KeyError: 'dim'
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
    raise KeyError('dim')
