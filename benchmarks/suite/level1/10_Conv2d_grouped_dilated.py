"""Grouped, dilated 2D convolution: 8 groups, 3x3 kernel, dilation 2, padding 2.
Level 1: each group maps its own 64 input channels to 64 output channels over a spread-out window."""

import torch
import torch.nn as nn

BATCH = 16
GROUPS = 8
IN_CHANNELS_PER_GROUP = 64
OUT_CHANNELS_PER_GROUP = 64
IN_CHANNELS = GROUPS * IN_CHANNELS_PER_GROUP
OUT_CHANNELS = GROUPS * OUT_CHANNELS_PER_GROUP
HEIGHT = 56
WIDTH = 56
KERNEL_SIZE = 3
DILATION = 2
PADDING = 2


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, padding: int,
                 dilation: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding,
                              dilation=dilation, groups=groups, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, PADDING, DILATION, GROUPS]
