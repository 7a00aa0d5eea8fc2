"""3x3 convolution, ReLU, then multiplication by a constant scale factor.
Level 2: a convolution with an elementwise epilogue (16x32x128x128 -> 16x64x128x128)."""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
HEIGHT = 128
WIDTH = 128
KERNEL_SIZE = 3
PADDING = 1
SCALE = 0.5


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int,
                 scale: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.relu(x)
        return x * self.scale


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING, SCALE]
