"""SELU activation (scaled ELU with fixed alpha and scale).
Level 1: elementwise; an exponential only where x <= 0 in the math, both branches per element."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
