"""A tensor-parallel decoder layer as rank 0 runs it (Megatron style): attention with its heads split
over the ranks (q, k, v column-parallel, the output projection row-parallel) and a gated MLP with its
intermediate size split (gate and up column-parallel, down row-parallel); each row-parallel layer's
partial sums are all-reduced with a functional collective; the norms and the residual stream are
replicated. Without a process group the same file is the single-device original; SHARDS says how
each rank's weights are cut from it.

    solar analyze examples/distributed/tp_decoder_layer.py --system 8xH100-SXM --world-size 8
    solar verify examples/distributed/tp_decoder_layer.py --world-size 8"""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN = 4096
HEADS = 32
KV_HEADS = 8
FFN = 14336
BATCH = 4
SEQ = 2048
# column-parallel weights cut along their rows, row-parallel ones along their columns
SHARDS = {"q.weight": 0, "k.weight": 0, "v.weight": 0, "o.weight": 1, "gate.weight": 0, "up.weight": 0, "down.weight": 1}


class Model(torch.nn.Module):
    def __init__(self, hidden: int = HIDDEN, heads: int = HEADS, kv_heads: int = KV_HEADS, ffn: int = FFN) -> None:
        super().__init__()
        self.ranks = dist.get_world_size() if dist.is_initialized() else 1
        self.dim = hidden // heads
        self.heads, self.kv = heads // self.ranks, max(1, kv_heads // self.ranks)
        bf16 = {"bias": False, "dtype": torch.bfloat16}
        self.norm1 = torch.nn.RMSNorm(hidden, dtype=torch.bfloat16)
        self.q = torch.nn.Linear(hidden, self.heads * self.dim, **bf16)
        self.k = torch.nn.Linear(hidden, self.kv * self.dim, **bf16)
        self.v = torch.nn.Linear(hidden, self.kv * self.dim, **bf16)
        self.o = torch.nn.Linear(self.heads * self.dim, hidden, **bf16)
        self.norm2 = torch.nn.RMSNorm(hidden, dtype=torch.bfloat16)
        self.gate = torch.nn.Linear(hidden, ffn // self.ranks, **bf16)
        self.up = torch.nn.Linear(hidden, ffn // self.ranks, **bf16)
        self.down = torch.nn.Linear(ffn // self.ranks, hidden, **bf16)

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


def get_verify_init_inputs():  # sizes the interpreter runs in seconds: one query and one key/value head a rank
    return [32, 8, 8, 64]


def get_verify_inputs():
    return [torch.randn(1, 4, 32, dtype=torch.bfloat16)]
