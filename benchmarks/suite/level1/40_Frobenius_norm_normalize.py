"""Divide a tensor by its Frobenius norm (one global reduction, then an elementwise divide).
Level 1: every output depends on every input through the norm."""

import torch
import torch.nn as nn

BATCH = 16
FEATURES = 64
DIM1 = 256
DIM2 = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.norm(x, p="fro")
        return x / norm


def get_inputs():
    return [torch.randn(BATCH, FEATURES, DIM1, DIM2)]


def get_init_inputs():
    return []
