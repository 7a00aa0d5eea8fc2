"""3D average pooling, 3x3x3 window, stride 2, padding 1, ceil_mode, padding not counted.
Level 1: border windows average fewer elements; the divisor is a per-position constant."""

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


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool3d(
            kernel_size, stride, padding, ceil_mode=True, count_include_pad=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, STRIDE, PADDING]
