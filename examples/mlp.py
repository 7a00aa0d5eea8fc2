"""A transformer-style MLP: Linear -> GELU -> Linear on a batch of token vectors.
Two GEMMs around an elementwise activation; fusion keeps the hidden activations on chip."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 512
DIM = 1024
HIDDEN = 4 * DIM


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HIDDEN]
