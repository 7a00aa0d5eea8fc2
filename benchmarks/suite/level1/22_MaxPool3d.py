"""3D max pooling, 3x3x3 window, stride 2, padding 1, dilation 2, over a volume.
Level 1: (BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH) volumes, windows clipped at the borders."""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 32
DEPTH = 64
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3
STRIDE = 2
PADDING = 1
DILATION = 2


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride, padding, dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING, DILATION]
