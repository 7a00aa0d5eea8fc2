# case: get_inputs raises
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs_raises\.py:\d+: get_inputs\(\) failed: RuntimeError: no data
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


def get_inputs():
    raise RuntimeError('no data')


def get_init_inputs():
    return []
