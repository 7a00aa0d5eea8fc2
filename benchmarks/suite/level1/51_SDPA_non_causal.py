"""Scaled dot-product attention without a mask, queries and keys of different lengths.
Level 1: every score is computed (L x S per head), softmax over the key axis."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
HEADS = 16
QUERY_LEN = 512
KEY_LEN = 1024
HEAD_DIM = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    q = torch.randn(BATCH, HEADS, QUERY_LEN, HEAD_DIM)
    k = torch.randn(BATCH, HEADS, KEY_LEN, HEAD_DIM)
    v = torch.randn(BATCH, HEADS, KEY_LEN, HEAD_DIM)
    return [q, k, v]


def get_init_inputs():
    return []
