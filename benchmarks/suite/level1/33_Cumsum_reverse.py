"""Reverse cumulative sum (suffix sums) written with flips.
Level 1: flip is an index map; the scan runs on the flipped view."""

import torch
import torch.nn as nn

BATCH = 128
LENGTH = 32768
DIM = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


def get_inputs():
    return [torch.randn(BATCH, LENGTH)]


def get_init_inputs():
    return [DIM]
