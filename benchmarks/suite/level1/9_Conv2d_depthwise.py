"""Depthwise 2D convolution (groups = channels), 3x3 kernel, padding 1.
Level 1: each channel is convolved with its own filter, so the work is 1/CHANNELS of a full conv."""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 128
HEIGHT = 112
WIDTH = 112
KERNEL_SIZE = 3
PADDING = 1


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=padding, groups=channels,
                              bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL_SIZE, PADDING]
