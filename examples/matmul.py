"""A single fp32 matrix multiplication C = A @ B, A: (M, K), B: (K, N).
The smallest useful solar input: compare its compute bound (2*M*N*K FLOPs) with its memory bound."""

import torch
import torch.nn as nn

M = 2048
K = 4096
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
