"""2D average pooling, 3x3 window, stride 1, padding 1, padding excluded from the divisor.
Level 1: the divisor is smaller at the borders (count_include_pad=False)."""

import torch
import torch.nn as nn

BATCH = 16
CHANNELS = 64
HEIGHT = 256
WIDTH = 256
KERNEL_SIZE = 3
PADDING = 1


class Model(nn.Module):
    def __init__(self, kernel_size: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=1, padding=padding, count_include_pad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL_SIZE, PADDING]
