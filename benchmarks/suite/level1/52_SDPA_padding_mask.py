"""Scaled dot-product attention with a boolean key-padding mask given as an input.
Level 1: the mask is data, so every score is computed and masked with a select; rows that are
fully masked give zeros, as PyTorch does."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
HEADS = 12
SEQ = 512
HEAD_DIM = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor
    ) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])


def get_inputs():
    q, k, v = (torch.randn(BATCH, HEADS, SEQ, HEAD_DIM) for _ in range(3))
    keep = torch.rand(BATCH, SEQ) > 0.2
    return [q, k, v, keep]


def get_init_inputs():
    return []
