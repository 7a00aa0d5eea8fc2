"""3D convolution, 2x2x2 max pooling, logsumexp over channels, then ReLU.
Level 2: a volume conv whose pooled output is reduced across channels."""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 3
OUT_CHANNELS = 16
DEPTH = 32
HEIGHT = 64
WIDTH = 64
KERNEL_SIZE = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)
        self.pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.conv(x))
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL_SIZE]
