"""3x3 convolution, 2x2 average pooling, sigmoid, then a sum over channels and space per sample.
Level 2: the pooled activations collapse to one number per sample."""

import torch
import torch.nn as nn

BATCH = 128
IN_CHANNELS = 3
OUT_CHANNELS = 16
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3
POOL = 2


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, pool: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.pool = nn.AvgPool2d(pool)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.sigmoid(self.pool(self.conv(x)))
        return torch.sum(x, dim=[1, 2, 3])


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE, POOL]
