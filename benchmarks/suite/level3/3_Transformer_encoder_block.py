"""A pre-norm transformer encoder block written out by hand: multi-head self-attention and a GELU MLP.
Level 3: q/k/v projections, heads via view/permute, softmax(q k^T / sqrt(d)) v, residuals, LayerNorms."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 1024
HEADS = 16
HEAD_DIM = 64
DIM = HEADS * HEAD_DIM
MLP_RATIO = 4


class Model(nn.Module):
    def __init__(self, dim: int, heads: int, mlp_ratio: int):
        super().__init__()
        assert dim % heads == 0, "dim must be a multiple of heads"
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.norm1 = nn.LayerNorm(dim)
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)

    def split_heads(self, t: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = t.shape
        return t.view(batch, seq, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, dim = x.shape
        q = self.split_heads(self.q_proj(x))  # (batch, heads, seq, head_dim)
        k = self.split_heads(self.k_proj(x))
        v = self.split_heads(self.v_proj(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale  # (batch, heads, seq, seq)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)  # (batch, heads, seq, head_dim)
        ctx = ctx.permute(0, 2, 1, 3).contiguous().view(batch, seq, dim)
        return self.out_proj(ctx)

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


def get_inputs():
    return [torch.randn(BATCH, SEQ, DIM)]


def get_init_inputs():
    return [DIM, HEADS, MLP_RATIO]
