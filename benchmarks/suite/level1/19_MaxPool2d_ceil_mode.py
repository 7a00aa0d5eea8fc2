"""2D max pooling, 3x3 window, stride 2, padding 1, ceil_mode (ResNet stem; last window clipped).
Level 1: only window elements inside the image are compared; padding costs nothing."""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 112
WIDTH = 112
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride, padding, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
