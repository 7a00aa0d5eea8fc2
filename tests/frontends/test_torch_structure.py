"""Structure-aware counting through the PyTorch frontend: causal attention (sdpa and written by
hand, with the mask built in the graph or held in a buffer) counts exactly S(S+1)/2 scores per head
in both contractions; triangles of products compute only the kept triangle; work nobody uses costs
nothing; data-dependent indexing; --mode and --infer-structure; loader traps."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import solar
from solar.backends.memory import fused_dram_bytes
from solar.backends.work import graph_work, total
from solar.errors import UsageError
from solar.frontends.torch import lower_module, lower_traced, trace_file
from solar.frontends.torch.check import check_file, check_module
from solar.ir.scalar_ops import CostClass
from solar.lift import lift

B, H, S, D = 2, 3, 16, 8
HEADS = B * H
KEPT = S * (S + 1) // 2


def _work(program):
    return total(graph_work(lift(program)).values())


def _simt(work, cls: CostClass) -> int:
    return sum(n for (c, _), n in work.simt if c is cls)


def _qkv(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, S, D, generator=g) for _ in range(3))


class Sdpa(nn.Module):
    def __init__(self, causal: bool):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)


class TrilMask(nn.Module):
    """The mask built in the graph from constants: tril(ones) compared with 0."""

    def forward(self, q, k, v):
        mask = torch.tril(torch.ones(q.size(-2), q.size(-2)))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(mask == 0, float("-inf"))
        return F.softmax(att, dim=-1) @ v


class TriuBoolMask(nn.Module):
    """The mask as a boolean triu above the diagonal, masked where True."""

    def forward(self, q, k, v):
        mask = torch.triu(torch.ones(q.size(-2), q.size(-2), dtype=torch.bool), diagonal=1)
        att = (q @ k.transpose(-2, -1)).masked_fill(mask, float("-inf"))
        return torch.softmax(att, dim=-1) @ v


class SdpaMask(nn.Module):
    """sdpa with a causal mask built in the graph: additive (triu of -inf) or boolean (tril)."""

    def __init__(self, additive: bool):
        super().__init__()
        self.additive = additive

    def forward(self, q, k, v):
        s = q.size(-2)
        if self.additive:
            mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        else:
            mask = torch.ones(s, s, dtype=torch.bool).tril()
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class BufferMask(nn.Module):
    """MinGPT: a causal mask registered as a buffer in __init__ (larger than the sequence)."""

    def __init__(self, max_seq: int):
        super().__init__()
        self.register_buffer(
            "bias", torch.tril(torch.ones(max_seq, max_seq)).view(1, 1, max_seq, max_seq)
        )

    def forward(self, q, k, v):
        t = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        return F.softmax(att, dim=-1) @ v


@pytest.mark.parametrize(
    "model",
    [Sdpa(True), SdpaMask(True), SdpaMask(False), TrilMask(), TriuBoolMask(), BufferMask(2 * S)],
    ids=lambda m: type(m).__name__,
)
def test_causal_attention_counts_the_kept_triangle_per_head(model):
    q, k, v = _qkv()
    program, _ = lower_module(model, (q, k, v))
    work = _work(program)
    assert work.mac_count == HEADS * KEPT * D * 2  # q k^T and p v, each over j <= i only
    assert _simt(work, CostClass.TRANSCENDENTAL) >= HEADS * KEPT  # one exp per kept score
    assert _simt(work, CostClass.TRANSCENDENTAL) <= HEADS * (
        KEPT + S
    )  # ... plus a reciprocal per row
    assert "bias" not in {t.name for t in program.tensors}  # a structured mask is never loaded
    assert check_module(model, (q, k, v)).ok


def test_non_causal_sdpa_counts_every_score():
    program, _ = lower_module(Sdpa(False), _qkv())
    assert _work(program).mac_count == HEADS * S * S * D * 2


def test_buffer_mask_from_a_file_is_recomputed_and_used_as_structure(tmp_path: Path):
    path = tmp_path / "mingpt_attention.py"
    path.write_text(
        textwrap.dedent(f"""
        import math
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("bias", torch.tril(torch.ones(64, 64)).view(1, 1, 64, 64))

            def forward(self, q, k, v):
                t = q.size(-2)
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
                return F.softmax(att, dim=-1) @ v

        def get_inputs():
            return [torch.randn({B}, {H}, {S}, {D}) for _ in range(3)]

        def get_init_inputs():
            return []
    """)
    )
    traced = trace_file(path)
    assert [s.key for s in traced.structure] == ["bias"]
    assert any("bias" in line and "lower-triangular" in line for line in traced.notes())
    assert _work(lower_traced(traced)).mac_count == HEADS * KEPT * D * 2
    assert check_file(path).ok


def test_tril_of_a_product_computes_only_the_kept_triangle():
    class Tril(nn.Module):
        def forward(self, a, b):
            return torch.tril(a @ b), torch.triu(a @ b, diagonal=2)

    n, kdim = 12, 5
    a, b = torch.randn(n, kdim), torch.randn(kdim, n)
    program, _ = lower_module(Tril(), (a, b))
    upper = sum(max(0, n - (i + 2)) for i in range(n))
    assert _work(program).mac_count == (n * (n + 1) // 2 + upper) * kdim
    assert check_module(Tril(), (a, b)).ok


def test_work_nobody_uses_costs_nothing():
    class Dead(nn.Module):
        def forward(self, x, w):
            y = (x @ w)[:, :4]  # only four columns of the product are used
            e = torch.exp(x)[:, :2]  # only two columns of the exponential
            _, mean = torch.var_mean(x, dim=1)  # only the mean: no sum of squares
            return y.relu(), e, mean

    m, kdim, n = 6, 5, 7
    x, w = torch.randn(m, kdim), torch.randn(kdim, n)
    program, _ = lower_module(Dead(), (x, w))
    work = _work(program)
    assert work.mac_count == m * 4 * kdim
    assert _simt(work, CostClass.TRANSCENDENTAL) == m * 2
    assert fused_dram_bytes(lift(program)) == 4 * (m * kdim + kdim * 4 + m * 4 + m * 2 + m)
    assert check_module(Dead(), (x, w)).ok


def test_data_dependent_indexing_bytes_are_lower_bounds():
    class Embed(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(100, 16)

        def forward(self, idx, x):
            return self.emb(idx).sum(1), torch.gather(x, 1, idx)

    idx, x = torch.randint(0, 10, (4, 6)), torch.randn(4, 10)
    program, _ = lower_module(Embed(), (idx, x))
    # one row of the table and one element of each row of x may be all the data names (indirect
    # footprints count one element per data-dependent dimension), the indices are read whole
    assert fused_dram_bytes(lift(program)) == 4 * 16 + 4 * 4 + 8 * 24 + 4 * (4 * 16 + 4 * 6)
    assert check_module(Embed(), (idx, x)).ok


def test_cross_entropy_gathers_the_target_class():
    class Loss(nn.Module):
        def forward(self, x, t):
            return F.cross_entropy(x, t)

    x, t = torch.randn(5, 7), torch.randint(0, 7, (5,))
    assert check_module(Loss(), (x, t)).ok
    assert solar.analyze(Loss(), (x, t), arch="H100-SXM").totals.flops > 0


class Branchy(nn.Module):
    def forward(self, x):
        return x * 2.0 if self.training else x + 1.0


@pytest.mark.parametrize("mode,op", [(None, "mul"), ("train", "mul"), ("eval", "add")])
def test_mode_is_applied_and_reported(mode, op):
    x = torch.randn(3, 4)
    report = solar.analyze(Branchy(), (x,), arch="H100-SXM", mode=mode)
    assert any(o.op == f"aten.{op}.Tensor" for o in report.ops)
    line = next(a for a in report.assumptions if a.startswith("module mode"))
    assert (mode or "as constructed") in line
    with pytest.raises(UsageError, match="unknown module mode"):
        solar.analyze(Branchy(), (x,), arch="H100-SXM", mode="inference")


TRIANGULAR = """
import torch
import torch.nn as nn

N = 24
M = 10

class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)

def get_inputs():
    return [torch.tril(torch.randn(N, N)), torch.randn(N, M)]

def get_init_inputs():
    return []
"""


def test_infer_structure_counts_the_triangle_and_states_the_assumption(tmp_path: Path):
    path = tmp_path / "tri.py"
    path.write_text(TRIANGULAR)
    dense = solar.analyze(path, arch="H100-SXM")
    tri = solar.analyze(path, arch="H100-SXM", infer_structure=True)
    assert dense.totals.contraction_flops == 2 * 24 * 24 * 10
    assert tri.totals.contraction_flops == 2 * (24 * 25 // 2) * 10
    assert tri.totals.dram_bytes == 4 * (24 * 25 // 2 + 24 * 10 + 24 * 10)
    assert any(
        "input 0 is lower-triangular" in a and "--infer-structure" in a for a in tri.assumptions
    )
    assert not any(a.startswith("structure") for a in dense.assumptions)
    assert check_file(path, infer_structure=True).ok


LOADER_TRAPS = """
import torch
import torch.nn as nn

BATCH = 3
HIDDEN = 8
STATE = torch.randn(2, BATCH, HIDDEN)  # a real tensor made at import time

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.h0 = torch.randn(1, BATCH, HIDDEN).cuda()  # a plain attribute, moved to a GPU
        self.extra = STATE
        self.rnn = nn.RNN(4, HIDDEN)

    def forward(self, x):
        self.h0 = self.h0.to(x.device)
        out, h = self.rnn(x, self.h0)
        return out + self.extra[0]

def get_inputs():
    return [torch.randn(5, BATCH, 4).cuda()]

def get_init_inputs():
    return []
"""


def test_tensors_held_as_plain_attributes_and_tensor_device_moves_load(tmp_path: Path):
    """Tensor attributes (made in __init__ under the fake mode, or real ones made at import) and
    `.cuda()` / `.to(device)` of tensors on a machine without a GPU."""
    path = tmp_path / "traps.py"
    path.write_text(LOADER_TRAPS)
    traced = trace_file(path)
    program = lower_traced(traced)
    assert {"h0", "extra"} <= {t.name for t in program.tensors}
    assert check_file(path).ok


MUTATED_MASK = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(8, 8)))
        self.mask.mul_(2.0)  # mutated after it was built: its recipe is forgotten

    def forward(self, x):
        return x.masked_fill(self.mask == 0, 0.0) @ x

def get_inputs():
    return [torch.randn(8, 8)]

def get_init_inputs():
    return []
"""


def test_a_mutated_buffer_is_data_not_structure(tmp_path: Path):
    path = tmp_path / "mutated.py"
    path.write_text(MUTATED_MASK)
    traced = trace_file(path)
    assert traced.structure == ()
    program = lower_traced(traced)
    assert "mask" in {t.name for t in program.tensors}
    assert _work(program).mac_count == 8 * 8 * 8
    assert check_file(path).ok


def test_masked_fill_with_a_data_mask_is_a_select_per_element():
    class Fill(nn.Module):
        def forward(self, x):
            return x.masked_fill(x > 0.5, -1.0)

    x = torch.randn(6, 7)
    program, _ = lower_module(Fill(), (x,))
    assert _simt(_work(program), CostClass.COMPARE) == 2 * 6 * 7  # the compare and the select
    assert check_module(Fill(), (x,)).ok
