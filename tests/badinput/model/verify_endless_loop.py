# case: solar verify on an endless loop in forward
# run: verify {file} --timeout 5
# exit: 2
# line: ^solar: error: .*did not finish within --timeout 5 s
# process: subprocess
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        while True:
            pass


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
