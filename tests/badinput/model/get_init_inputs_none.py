# case: get_init_inputs returns None
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*building Model\(\*get_init_inputs\(\)\) failed: TypeError
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
    return None
