# case: get_inputs gives three inputs to a one-input forward
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*torch\.export could not trace the model: TypeError
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4)] * 3


def get_init_inputs():
    return []
