"""1D max pooling with a dilated window: kernel 4, stride 2, padding 2, dilation 3, with indices.
Level 1: returns the pooled values and the position of each window's maximum."""

import torch
import torch.nn as nn

BATCH = 64
CHANNELS = 64
LENGTH = 8192
KERNEL_SIZE = 4
STRIDE = 2
PADDING = 2
DILATION = 3


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride, padding, dilation, return_indices=True)

    def forward(self, x: torch.Tensor):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
