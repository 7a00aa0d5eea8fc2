"""Instance normalization: mean and variance per (sample, channel) over the spatial dims.
Level 1: PyTorch runs it as a batch norm over BATCH*FEATURES channels."""

import torch
import torch.nn as nn

BATCH = 16
FEATURES = 64
HEIGHT = 256
WIDTH = 256


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, FEATURES, HEIGHT, WIDTH)]


def get_init_inputs():
    return [FEATURES]
