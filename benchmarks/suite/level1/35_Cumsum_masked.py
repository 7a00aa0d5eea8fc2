"""Masked cumulative sum: only elements where the mask is true are accumulated.
Level 1: one multiply by the mask per element, then the scan."""

import torch
import torch.nn as nn

BATCH = 128
LENGTH = 32768
DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH), torch.randint(0, 2, (BATCH, LENGTH)).bool()]


def get_init_inputs():
    return [DIM]
