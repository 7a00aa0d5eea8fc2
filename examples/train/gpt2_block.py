"""A GPT-2-style pre-norm transformer block (causal self-attention through SDPA, GELU MLP) trained
with AdamW: `solar analyze examples/train/gpt2_block.py --train`."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 1024
D_MODEL = 768


class Model(nn.Module):
    def __init__(self, d_model: int = D_MODEL, heads: int = 12) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.out = nn.Linear(4 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def get_inputs():
    return [torch.randn(BATCH, SEQ, D_MODEL)]


def get_init_inputs():
    return []
