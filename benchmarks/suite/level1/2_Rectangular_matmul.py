"""Rectangular matrix multiplication C = A @ B, A: (M, K), B: (K, N).
Level 1: a single dense contraction with a long reduction dimension."""

import torch
import torch.nn as nn

M = 1024
K = 8192
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.mm(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
