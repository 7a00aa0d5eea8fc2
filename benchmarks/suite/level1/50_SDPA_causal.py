"""Causal scaled dot-product attention (F.scaled_dot_product_attention, is_causal=True).
Level 1: two contractions around a softmax, each over the kept triangle j <= i only: per head
S(S+1)/2 scores, not S^2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
HEADS = 16
SEQ = 1024
HEAD_DIM = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM) for _ in range(3)]


def get_init_inputs():
    return []
