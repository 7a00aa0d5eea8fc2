"""Collectives in the IR: printed and parsed exactly, checked, and run on simulated ranks so that a
sharded program reproduces its single-device original."""

from __future__ import annotations

import numpy as np
import pytest

from solar.errors import IRSyntaxError, IRVerifyError
from solar.ir.collectives import (
    Collective,
    Kind,
    exchange,
    format_sharded,
    parse_sharded,
    run_ranks,
    verify_sharded,
)
from solar.ir.interp import run
from solar.ir.parser import parse_program
from solar.ir.scalar_ops import Update


def mlp(name: str, cols: int, header: str = "", sums: str = "y", extra_temps: tuple[str, ...] = (), tail: str = "") -> str:
    """The text of a two-layer MLP on x: f32[4, 6] whose hidden layer has `cols` columns (8 whole,
    4 on each of 2 ranks), its second product summed into `sums`; a sharded program's `header`
    lines before it, its collectives' temps and local parts after."""
    temps = "".join(f"  temp {t}\n" for t in extra_temps)
    out = "" if sums == "y" else f"  temp {sums}: f32[4, 6]\n"
    return f"""{header}program {name} {{
  input x: f32[4, 6]
  param w1: f32[6, {cols}]
  param w2: f32[{cols}, 6]
  temp h: f32[4, {cols}]
{out}{temps}  output y: f32[4, 6]
  for i in 0..4, j in 0..{cols}:
    h[i, j] = 0
  for i in 0..4, j in 0..{cols}, k in 0..6:
    h[i, j] += x[i, k] * w1[k, j]
  for i in 0..4, j in 0..{cols}:
    h[i, j] = max(h[i, j], 0)
  for i in 0..4, n in 0..6:
    {sums}[i, n] = 0
  for i in 0..4, n in 0..6, j in 0..{cols}:
    {sums}[i, n] += h[i, j] * w2[j, n]
{tail}}}
"""


ORIGINAL = mlp("mlp", 8)

# Megatron tensor parallelism on 2 ranks: w1 split by columns, w2 by rows, an all-reduce of the
# partial sums; then a max-reduce-scatter of the (equal) sums and an all-gather: an identity.
SHARDED = mlp(
    "mlp_tp2", 4,
    header="""world 2
collective p = all_reduce.sum(part) groups 0,1
collective q = reduce_scatter.max(p, dim=0) groups 0,1
collective y = all_gather(q, dim=0) groups 0,1
""",
    sums="part",
    extra_temps=("p: f32[4, 6]", "q: f32[2, 6]"),
    tail="""  for i0 in 0..4, i1 in 0..6:
    p[i0, i1] = part[i0, i1]
  for r in 0..2, i0 in 0..2, i1 in 0..6:
    q[i0, i1] = p[i0 + 2*r, i1]
  for r in 0..2, i0 in 0..2, i1 in 0..6:
    y[i0 + 2*r, i1] = q[i0, i1]
""",
)


def test_round_trip_and_verify():
    sharded = parse_sharded(SHARDED)
    verify_sharded(sharded)
    assert [c.kind for c in sharded.collectives] == [Kind.ALL_REDUCE, Kind.REDUCE_SCATTER, Kind.ALL_GATHER]
    assert format_sharded(sharded) == SHARDED
    assert parse_sharded(format_sharded(sharded)) == sharded


def test_simulated_ranks_reproduce_the_original():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    w1 = rng.standard_normal((6, 8)).astype(np.float32)
    w2 = rng.standard_normal((8, 6)).astype(np.float32)
    want = run(parse_program(ORIGINAL), {"x": x, "w1": w1, "w2": w2})["y"]
    shards = [{"x": x, "w1": w1[:, 4 * r : 4 * r + 4], "w2": w2[4 * r : 4 * r + 4]} for r in range(2)]
    got = run_ranks(parse_sharded(SHARDED), shards)
    for rank in got:
        np.testing.assert_allclose(rank["y"], want, rtol=1e-5, atol=1e-5)


A = [np.arange(8.0).reshape(4, 2) + 100 * r for r in range(4)]
G2 = ((0, 1), (2, 3))
EXCHANGES = [  # (collective, rank, expected value of out on that rank)
    (Collective(Kind.ALL_REDUCE, "o", "a", G2), 1, A[0] + A[1]),
    (Collective(Kind.ALL_REDUCE, "o", "a", ((0, 1, 2, 3),), Update.MAX), 0, A[3]),
    (Collective(Kind.ALL_GATHER, "o", "a", G2, dim=1), 3, np.concatenate([A[2], A[3]], axis=1)),
    (Collective(Kind.REDUCE_SCATTER, "o", "a", G2), 1, (A[0] + A[1])[2:]),
    (Collective(Kind.ALL_TO_ALL, "o", "a", G2), 0, np.concatenate([A[0][:2], A[1][:2]])),
    (Collective(Kind.ALL_TO_ALL, "o", "a", G2), 1, np.concatenate([A[0][2:], A[1][2:]])),
    (Collective(Kind.SEND_RECV, "o", "a", ((0, 1, 2, 3),)), 0, A[3]),
    (Collective(Kind.SEND_RECV, "o", "a", ((0, 1, 2, 3),), shift=2), 1, A[3]),
]


@pytest.mark.parametrize("c,rank,want", EXCHANGES)
def test_exchange(c, rank, want):
    np.testing.assert_array_equal(exchange(c, A)[rank], want)


BAD = [  # (edit of SHARDED, message)
    (lambda t: t.replace("groups 0,1\ncollective q", "groups 0,0\ncollective q"), r"collective 1 .*groups must split"),
    (lambda t: t.replace("reduce_scatter.max(p, dim=0)", "reduce_scatter.max(p, dim=1)"), r"6\) does not split|shape"),
    (lambda t: t.replace("all_gather(q, dim=0)", "all_gather(h, dim=0)"), r"no tensor|f32|shape"),
    (lambda t: t.replace("    p[i0, i1] = part[i0, i1]", "    p[i0, i1] = part[i0, i1] * 2"), r"local part"),
    (lambda t: t.replace("world 2", "world 3"), r"groups must split ranks 0\.\.2"),
]


@pytest.mark.parametrize("edit,message", BAD)
def test_bad_collectives(edit, message):
    with pytest.raises(IRVerifyError, match=message) as info:
        verify_sharded(parse_sharded(edit(SHARDED)))
    assert "\n" not in str(info.value)


SYNTAX = [
    ("program x {\n}", r"line 1: a sharded program starts with `world N`"),
    ("world 2\ncollective y = all_gather.sum(q, dim=0) groups 0,1\n", r"line 2: all_gather takes no reduction"),
    ("world 2\ncollective y = broadcast(q) groups 0,1\n", r"line 2: expected `collective OUT"),
]


@pytest.mark.parametrize("text,message", SYNTAX)
def test_syntax_errors(text, message):
    with pytest.raises(IRSyntaxError, match=message):
        parse_sharded(text)
