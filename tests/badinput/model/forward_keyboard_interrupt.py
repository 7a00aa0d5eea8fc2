# case: KeyboardInterrupt raised in forward
# run: analyze {file} --arch H100-SXM --json
# exit: 130
# line: ^solar: interrupted$
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raise KeyboardInterrupt


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
