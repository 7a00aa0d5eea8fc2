"""GELU activation (the exact, erf-based form of F.gelu) applied elementwise.
Level 1: memory-bound, with a transcendental per element."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
