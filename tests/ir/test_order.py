"""Order statements (`order(key, r, rank)`: sort / top-k positions) and indirect indices that
claim distinct values: text round trip, the interpreter's order (stable, NaN greatest, as
PyTorch), zero counted work, the verifier's placement rules, and the distinct claim both priced
(footprints) and checked (interpreter)."""

from __future__ import annotations

import numpy as np
import pytest

from solar.errors import IRVerifyError
from solar.ir import polyhedral
from solar.ir.interp import run
from solar.ir.parser import parse_program
from solar.ir.verify import verify
from solar.lift import lift

TOPK = """program p {
  input x: f32[3, 6]
  output idx: i64[3, 2]
  output val: f32[3, 2]
  for b in 0..3, j in 0..2, r in 0..6:
    idx[b, j] = order_desc(x[b, r], r, j)
  for b in 0..3, j in 0..2:
    val[b, j] = x[b, ind(idx[b, j])]
}
"""


def test_round_trip_and_topk_semantics():
    program = parse_program(TOPK)
    assert str(program) == TOPK
    verify(program)
    x = np.array([[1, 5, 5, 2, 0, 7], [np.nan, 1, 2, 3, 4, 5], [0, 0, 0, 0, 0, 0]], np.float32)
    out = run(program, {"x": x})
    # ties by position, NaN greatest (PyTorch's order)
    assert out["idx"].tolist() == [[5, 1], [0, 5], [0, 1]]
    assert np.array_equal(out["val"], np.take_along_axis(x, out["idx"], 1), equal_nan=True)


def test_ascending_sort_with_ties_and_nan():
    program = parse_program(
        """program p {
  input x: f32[7]
  output idx: i64[7]
  for j in 0..7, r in 0..7:
    idx[j] = order(x[r], r, j)
}
"""
    )
    x = np.array([3, np.nan, 1, 3, -np.inf, np.inf, 1], np.float32)
    assert run(program, {"x": x})["idx"].tolist() == [4, 2, 6, 0, 3, 5, 1]


def test_order_costs_no_work_and_reads_every_key():
    graph = lift(parse_program(TOPK))
    from solar.backends.work import graph_work

    work = graph_work(graph)
    assert work[0].is_zero  # the order statement computes nothing
    assert graph.footprints.elements("x", "read") == 18
    assert graph.footprints.elements("idx", "write") == 6


@pytest.mark.parametrize(
    ("stmt", "match"),
    [
        ("idx[b, j] = order(x[b, r], r, j) + 1", "whole value of an assignment"),
        ("idx[b, j] = order(x[b, r], q, j)", "not a loop variable here"),
        ("idx[b, r] = order(x[b, r], r, j)", "must not use 'r'"),
        ("idx[b, j] = order(x[b, r] * 2.0, r, j)", "the key must be a load"),
        ("idx[b, j] = order(x[b, r], r, j + 5)", r"rank ranges over 5\.\.6, outside 0\.\.5"),
    ],
)
def test_verifier_rules(stmt, match):
    text = TOPK.replace("    idx[b, j] = order_desc(x[b, r], r, j)", "    " + stmt)
    with pytest.raises(IRVerifyError, match=match):
        verify(parse_program(text))


GROUPED = """program g {
  input a: f32[6, 4]
  input w: f32[3, 4, 5]
  input grp: i64[6]
  output out: f32[6, 5]
  for s in 0..6, n in 0..5:
    out[s, n] = 0.0
  for s in 0..6, n in 0..5, c in 0..4:
    out[s, n] += a[s, c] * w[ind(grp[s], 2), c, n]
}
"""


def test_distinct_claim_is_priced_and_checked():
    program = parse_program(GROUPED)
    assert str(program) == GROUPED
    stmt = program.stmts[1]
    load = next(ld for ld in stmt.loads() if ld.tensor == "w")
    assert polyhedral.access_footprint(program, stmt, load) == 2 * 4 * 5  # two experts at least
    assert lift(program).footprints.elements("w", "read") == 2 * 4 * 5
    feed = {"a": np.ones((6, 4), np.float32), "w": np.ones((3, 4, 5), np.float32)}
    run(program, dict(feed, grp=np.array([0, 0, 2, 2, 2, 2])))
    with pytest.raises(IRVerifyError, match="claims at least 2 distinct values and takes 1"):
        run(program, dict(feed, grp=np.zeros(6, np.int64)))


def test_distinct_claim_ignored_where_dims_share_a_variable():
    program = parse_program(
        GROUPED.replace("w[ind(grp[s], 2), c, n]", "w[ind(grp[s], 2), c, s % 5]")
    )
    stmt = program.stmts[1]
    load = next(ld for ld in stmt.loads() if ld.tensor == "w")
    assert polyhedral.indirect_values(load.index, guarded=False) == 1
