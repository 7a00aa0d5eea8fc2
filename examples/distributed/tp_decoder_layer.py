"""A tensor-parallel decoder layer as rank 0 runs it (Megatron style): attention with its heads split
over the ranks (q, k, v column-parallel, the output projection row-parallel) and a gated MLP with its
intermediate size split (gate and up column-parallel, down row-parallel); each row-parallel layer's
partial sums are all-reduced with a functional collective; the norms and the residual stream are
replicated.

    solar analyze examples/distributed/tp_decoder_layer.py --system 8xH100-SXM --world-size 8"""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN = 4096
HEADS = 32
KV_HEADS = 8
FFN = 14336
BATCH = 4
SEQ = 2048


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ranks = dist.get_world_size() if dist.is_initialized() else 1
        self.dim = HIDDEN // HEADS
        self.heads, self.kv = HEADS // self.ranks, max(1, KV_HEADS // self.ranks)
        bf16 = {"bias": False, "dtype": torch.bfloat16}
        self.norm1 = torch.nn.RMSNorm(HIDDEN, dtype=torch.bfloat16)
        self.q = torch.nn.Linear(HIDDEN, self.heads * self.dim, **bf16)
        self.k = torch.nn.Linear(HIDDEN, self.kv * self.dim, **bf16)
        self.v = torch.nn.Linear(HIDDEN, self.kv * self.dim, **bf16)
        self.o = torch.nn.Linear(self.heads * self.dim, HIDDEN, **bf16)
        self.norm2 = torch.nn.RMSNorm(HIDDEN, dtype=torch.bfloat16)
        self.gate = torch.nn.Linear(HIDDEN, FFN // self.ranks, **bf16)
        self.up = torch.nn.Linear(HIDDEN, FFN // self.ranks, **bf16)
        self.down = torch.nn.Linear(FFN // self.ranks, HIDDEN, **bf16)

    def _reduce(self, partial: torch.Tensor) -> torch.Tensor:
        if self.ranks > 1:
            return funcol.all_reduce(partial, "sum", dist.group.WORLD)
        return partial

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, s, self.heads, self.dim).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv, self.dim).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv, self.dim).transpose(1, 2)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self._reduce(self.o(a.transpose(1, 2).reshape(b, s, -1)))
        h = self.norm2(x)
        return x + self._reduce(self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h)))


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
