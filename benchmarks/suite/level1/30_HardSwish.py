"""HardSwish activation, x * relu6(x + 3) / 6 (MobileNetV3).
Level 1: elementwise, no transcendental function."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
