"""3x3 convolution followed by a mean over the spatial dimensions (global average).
Level 2: the (BATCH, OUT_CHANNELS, H, W) conv output collapses to (BATCH, OUT_CHANNELS)."""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 56
WIDTH = 56
KERNEL_SIZE = 3
PADDING = 1


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        return x.mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING]
