"""Batched matrix multiplication with torch.bmm: (B, M, K) @ (B, K, N) -> (B, M, N).
Level 1: one contraction repeated over an independent batch dimension."""

import torch
import torch.nn as nn

BATCH = 64
M = 512
K = 1024
N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    A = torch.randn(BATCH, M, K)
    B = torch.randn(BATCH, K, N)
    return [A, B]


def get_init_inputs():
    return []
