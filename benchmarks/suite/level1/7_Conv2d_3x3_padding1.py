"""Standard 2D convolution, 3x3 kernel, stride 1, padding 1 ("same"), on 224x224 RGB images.
Level 1: a single convolution with a tiny input-channel count (3 -> 64)."""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 3
OUT_CHANNELS = 64
HEIGHT = 224
WIDTH = 224
KERNEL_SIZE = 3
PADDING = 1


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING]
