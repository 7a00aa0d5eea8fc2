"""Mean reduction over the last dimension (keepdim=False) of a (BATCH, DIM1, DIM2) tensor.
Level 1: a sum over DIM2 followed by a scale, output (BATCH, DIM1)."""

import torch
import torch.nn as nn

BATCH = 16
DIM1 = 2048
DIM2 = 2048
REDUCE_DIM = 2


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [REDUCE_DIM]
