# case: elementwise ops on an empty tensor (the IR has no zero-size tensors)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*size 0 is not positive
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
