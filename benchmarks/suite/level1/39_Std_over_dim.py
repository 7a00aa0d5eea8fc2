"""Unbiased standard deviation over one dimension.
Level 1: sum and sum of squares per row, then sqrt of the corrected variance."""

import torch
import torch.nn as nn

BATCH = 16
DIM1 = 256
DIM2 = 256
REDUCE_DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.std(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [REDUCE_DIM]
