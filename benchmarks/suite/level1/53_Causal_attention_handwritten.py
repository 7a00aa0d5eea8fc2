"""Causal attention written by hand: q k^T scaled, a causal mask built in the graph from
torch.tril(torch.ones(S, S)), masked_fill with -inf, softmax, @ v.
Level 1: the mask is a function of positions only, so the structure pass turns it into guards
and both matmuls count only the kept triangle (as with is_causal=True)."""

import math

import torch
import torch.nn as nn

BATCH = 4
HEADS = 8
SEQ = 1024
HEAD_DIM = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        seq = q.size(-2)
        mask = torch.tril(torch.ones(seq, seq, device=q.device))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
        att = att.masked_fill(mask == 0, float("-inf"))
        return torch.softmax(att, dim=-1) @ v


def get_inputs():
    return [torch.randn(BATCH, HEADS, SEQ, HEAD_DIM) for _ in range(3)]


def get_init_inputs():
    return []
