"""Softplus activation with beta 2 and threshold 10.
Level 1: elementwise log(1 + exp(beta x)) / beta, linear above the threshold."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softplus(beta=2.0, threshold=10.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
