"""Max reduction (torch.amax) over the leading dimension of a (BATCH, DIM1, DIM2) tensor.
Level 1: reduce over BATCH, output (DIM1, DIM2)."""

import torch
import torch.nn as nn

BATCH = 16
DIM1 = 2048
DIM2 = 2048
REDUCE_DIM = 0


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [REDUCE_DIM]
