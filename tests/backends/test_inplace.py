"""In-place updates of inputs and buffers: the output holding a mutated tensor's new value
shares its storage (TensorDecl.updates), so the identity copy the functional export makes moves
nothing, and only what changes is written. Exact byte counts by hand."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import solar
from solar.api import load

F32 = 4


def _bytes(model: nn.Module, *inputs) -> float:
    # every output byte in DRAM at the end: the in-place rules (write-back: tests/backends/test_library.py)
    return solar.analyze(model, inputs, arch="H200-SXM", writeback=False).totals.dram_bytes


class IndexCopy(nn.Module):
    def forward(self, x, idx, src):
        x.index_copy_(0, idx, src)
        return x


class SliceMul(nn.Module):
    def forward(self, x):
        x[:, :16].mul_(2)
        return x


class Fill(nn.Module):
    def forward(self, x):
        x.zero_()
        return x


class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(2, 4, 64, 8))
        self.register_buffer("v", torch.zeros(2, 4, 64, 8))

    def forward(self, q, kn, vn, pos):
        self.k.index_copy_(2, pos, kn)
        self.v.index_copy_(2, pos, vn)
        return F.scaled_dot_product_attention(q, self.k, self.v)


def test_the_mutated_input_is_marked_as_updated_in_place():
    program = load(IndexCopy(), (torch.zeros(32, 16), torch.tensor([1, 5]), torch.ones(2, 16))).program
    (out,) = [t for t in program.tensors if t.updates]
    assert program.tensor(out.updates).role.value == "input"


def test_index_copy_writes_only_the_rows():
    # reads: idx (2 x i64) and src (2 x 16 f32); writes: the rows, at the smallest footprint any
    # index data gives (one row: both indices may be equal); nothing of x is read
    assert _bytes(IndexCopy(), torch.zeros(32, 16), torch.tensor([1, 5]), torch.ones(2, 16)) == (
        2 * 8 + 2 * 16 * F32 + 16 * F32
    )


def test_slice_update_moves_the_slice_each_way():
    assert _bytes(SliceMul(), torch.zeros(64, 64)) == 2 * 64 * 16 * F32


def test_full_overwrite_reads_nothing():
    assert _bytes(Fill(), torch.zeros(64, 64)) == 64 * 64 * F32


def test_kv_cache_row_write_then_attention_reads_the_cache_once():
    q = torch.randn(2, 4, 1, 8)
    total = _bytes(Cache(), q, q.clone(), q.clone(), torch.tensor([17]))
    cache, row = 2 * 4 * 64 * 8 * F32, 2 * 4 * 1 * 8 * F32
    # q, the two new rows and pos are read; each cache: its other rows read, the new row written;
    # the output is written
    assert total == 3 * row + 8 + 2 * (cache - row + row) + row


def test_identity_copies_cost_no_kernel_in_the_unfused_bound():
    report = solar.analyze(IndexCopy(), (torch.zeros(32, 16), torch.tensor([1, 5]), torch.ones(2, 16)),
                           arch="H200-SXM")
    assert report.bounds["unfused"].seconds <= report.bounds["fused"].seconds * 1.0000001 + 1e-12


# ---- the IR text form and the verifier --------------------------------------------------------

TEXT = """program p {
  input x: f32[8, 4]
  input v: f32[4]
  output y: f32[8, 4] updates x
  for i0 in 0..8, i1 in 0..4:
    y[i0, i1] = x[i0, i1]
  for i1 in 0..4:
    y[3, i1] = v[i1]
}
"""


def test_updates_round_trips_and_prices_the_row():
    from solar.backends.memory import compulsory_bytes
    from solar.ir.parser import parse_program
    from solar.lift import lift

    program = parse_program(TEXT)
    assert str(program) == TEXT
    assert compulsory_bytes(lift(program)) == (4 * F32, 4 * F32)  # v read, row 3 written; x untouched


@pytest.mark.parametrize(
    "decl, message",
    [
        ("temp y: f32[8, 4] updates x", "only an output can update"),
        ("output y: f32[8, 4] updates w", "not a declared input or param"),
        ("output y: f32[8, 4] updates v", "shape or dtype differs"),
    ],
)
def test_bad_updates_are_verifier_errors(decl, message):
    from solar.errors import IRVerifyError
    from solar.ir.parser import parse_program
    from solar.ir.verify import verify

    text = TEXT.replace("output y: f32[8, 4] updates x", decl)
    if decl.startswith("temp"):
        text = text.replace("  input v: f32[4]\n", "  input v: f32[4]\n  output z: f32[4]\n").replace(
            "    y[3, i1] = v[i1]\n", "    y[3, i1] = v[i1]\n  for i1 in 0..4:\n    z[i1] = y[0, i1]\n"
        )
    with pytest.raises(IRVerifyError, match=message):
        verify(parse_program(text))
