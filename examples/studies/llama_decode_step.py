"""One decode step of a Llama-2-7B-shaped model (hidden 4096, 32 heads, SwiGLU 11008, vocab 32000,
bf16), LAYERS decoder layers: each of BATCH sequences adds one token, attending CONTEXT cached
tokens plus its own. KernelBench format; the gallery study examples/studies/llm_decode.py sweeps
BATCH. The KV cache is an input (it lives in DRAM between steps); the new token's key and value
are concatenated to it (a real server writes them in place; the bound reads the cache once either
way)."""

import torch
import torch.nn.functional as F
from torch import nn

BATCH = 4  # the study sweeps 1..256; 4 is the traced size of its symbolic run
CONTEXT = 1024
LAYERS = 2
HIDDEN = 4096
HEADS = 32
HEAD_DIM = HIDDEN // HEADS
FFN = 11008
VOCAB = 32000
DTYPE = torch.bfloat16


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


def rotate(x, cos, sin):
    x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2 :]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(HIDDEN)
        self.q = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.mlp_norm = RMSNorm(HIDDEN)
        self.gate = nn.Linear(HIDDEN, FFN, bias=False)
        self.up = nn.Linear(HIDDEN, FFN, bias=False)
        self.down = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x, k_cache, v_cache, cos, sin):
        b = x.shape[0]
        h = self.attn_norm(x)
        q = self.q(h).view(b, 1, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k(h).view(b, 1, HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v(h).view(b, 1, HEADS, HEAD_DIM).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        keys = torch.cat((k_cache, k), dim=2)
        values = torch.cat((v_cache, v), dim=2)
        a = F.scaled_dot_product_attention(q, keys, values)
        x = x + self.o(a.transpose(1, 2).reshape(b, 1, HIDDEN))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.to(DTYPE)

    def forward(self, tokens, cos, sin, *caches):
        x = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            x = layer(x, caches[2 * i], caches[2 * i + 1], cos, sin)
        return self.lm_head(self.norm(x))


def get_inputs():
    cache = [torch.randn(BATCH, HEADS, CONTEXT, HEAD_DIM, dtype=DTYPE) for _ in range(2 * LAYERS)]
    tokens = torch.randint(0, VOCAB, (BATCH, 1))
    cos = torch.randn(1, 1, 1, HEAD_DIM, dtype=DTYPE)
    sin = torch.randn(1, 1, 1, HEAD_DIM, dtype=DTYPE)
    return [tokens, cos, sin, *cache]


def get_init_inputs():
    return []
