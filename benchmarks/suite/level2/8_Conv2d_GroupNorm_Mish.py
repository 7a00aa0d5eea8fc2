"""3x3 convolution, group norm over GROUPS groups, then Mish.
Level 2: statistics per (sample, group) of the conv output, then an elementwise Mish."""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 32
GROUPS = 8
CHANNELS_PER_GROUP = 16
OUT_CHANNELS = GROUPS * CHANNELS_PER_GROUP
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, groups: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.act = nn.Mish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, GROUPS, KERNEL_SIZE]
