"""Matmul with a transposed operand: C = A.T @ B where A is stored as (K, M) and B as (K, N).
Level 1: the transpose is a view, so the work is one (M, K) x (K, N) contraction."""

import torch
import torch.nn as nn

M = 2048
K = 4096
N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
