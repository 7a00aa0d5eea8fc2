# case: KeyboardInterrupt raised in forward and no signal arrived: the file's error, not an interrupt
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: forward_keyboard_interrupt\.py:\d+: tracing forward\(\) raised KeyboardInterrupt, though no Ctrl-C arrived
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
