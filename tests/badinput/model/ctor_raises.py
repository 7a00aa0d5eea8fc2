# case: Model.__init__ raises
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*ctor_raises\.py:\d+: building Model\(\*get_init_inputs\(\)\) failed: ValueError: bad width
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__(); raise ValueError('bad width')

    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
