"""Broadcasting matmul: A (BATCH, HEADS, M, K) @ B (HEADS, K, N) -> (BATCH, HEADS, M, N).
Level 1: B is shared across the leading batch dimension, so it is read once, not BATCH times."""

import torch
import torch.nn as nn

BATCH = 8
HEADS = 16
M = 512
K = 256
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(BATCH, HEADS, M, K)
    B = torch.randn(HEADS, K, N)
    return [A, B]


def get_init_inputs():
    return []
