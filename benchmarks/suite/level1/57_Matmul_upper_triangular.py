"""Product of two upper-triangular matrices, kept upper-triangular: triu(A @ B).
Level 1: the output triangle is demanded only, so the contraction is guarded by j >= i; with
--infer-structure the zeros of A and B (seen in a sample of the inputs) also guard the reduction."""

import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.triu(torch.matmul(A, B))


def get_inputs():
    return [torch.triu(torch.randn(N, N)), torch.triu(torch.randn(N, N))]


def get_init_inputs():
    return []
