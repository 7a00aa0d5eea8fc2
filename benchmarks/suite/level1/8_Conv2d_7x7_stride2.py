"""Strided 2D convolution, 7x7 kernel, stride 2, padding 3 (a ResNet-style stem) with bias.
Level 1: 16x3x224x224 -> 16x64x112x112; each output reads a strided input window."""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 3
OUT_CHANNELS = 64
HEIGHT = 224
WIDTH = 224
KERNEL_SIZE = 7
STRIDE = 2
PADDING = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, STRIDE, PADDING]
