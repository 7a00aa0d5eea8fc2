"""Self-attention layer: one fused QKV projection, heads split by view/transpose, causal
F.scaled_dot_product_attention, and the output projection.
Level 2: two dense contractions around causal attention (kept triangle only)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 1024
HEADS = 16
HEAD_DIM = 64
DIM = HEADS * HEAD_DIM


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS]
