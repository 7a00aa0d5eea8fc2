"""ReLU activation, y = max(x, 0), applied elementwise to a (BATCH, DIM) tensor.
Level 1: purely memory-bound; one read and one write per element."""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
