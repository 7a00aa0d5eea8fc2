"""In-order loops (`Seq`): text form, interpreter (once per step), verifier, counts (T x body, exact
and parametric), lifting, and the passes treating them as barriers."""

from __future__ import annotations

import numpy as np
import pytest

from solar.errors import IRSyntaxError, IRVerifyError
from solar.ir import polyhedral
from solar.ir.interp import program_cost, run
from solar.ir.nodes import Seq, Stmt
from solar.ir.parser import parse_program
from solar.ir.verify import verify
from solar.lift import lift
from solar.passes import optimize
from solar.passes.structure import propagate

SCAN = """program scan {
  sym T = 6
  input x: f32[3, T]
  output c: f32[3, T]
  for i in 0..3:
    c[i, 0] = x[i, 0]
  for s in 0..5 in order {
    for i in 0..3:
      c[i, s + 1] = c[i, s] + x[i, s + 1]
  }
}
"""

# an in-place carry: h is overwritten at every step, and a nested in-order loop inside
NESTED = """program nested {
  input x: f32[4, 3, 2]
  temp h: f32[2]
  output y: f32[4, 3, 2]
  for j in 0..2:
    h[j] = 0
  for t in 0..4 in order {
    for j in 0..2:
      h[j] = h[j] * 0.5
    for u in 0..3 in order {
      for j in 0..2:
        h[j] = h[j] + x[t, u, j]
      for j in 0..2:
        y[t, u, j] = h[j]
    }
  }
}
"""


def _nested_reference(x):
    h, y = np.zeros(2, np.float32), np.zeros_like(x)
    for t in range(4):
        h = h * 0.5
        for u in range(3):
            h = h + x[t, u]
            y[t, u] = h
    return y


def test_print_is_the_documented_form_and_round_trips():
    p = parse_program(SCAN)
    assert str(p) == SCAN
    assert isinstance(p.body[1], Seq) and p.body[1].var == "s" and p.body[1].extent == 5
    q = parse_program(NESTED)
    assert str(q) == NESTED and parse_program(str(q)) == q


def test_stmts_is_the_flattened_view_with_in_order_loops_in_front():
    p = parse_program(NESTED)
    assert [s.loop_vars for s in p.stmts] == [("j",), ("t", "j"), ("t", "u", "j"), ("t", "u", "j")]
    assert [tuple(q.var for q in seqs) for seqs, _ in p.nested()] == [(), ("t",), ("t", "u"), ("t", "u")]


def test_interpreter_runs_the_body_once_per_step():
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(run(parse_program(SCAN), {"x": x})["c"], np.cumsum(x, 1), rtol=1e-6)
    x = np.random.default_rng(1).standard_normal((4, 3, 2)).astype(np.float32)
    got = run(parse_program(NESTED), {"x": x})["y"]
    np.testing.assert_allclose(got, _nested_reference(x), rtol=1e-6)


def test_interpreter_cost_counts_every_step():
    p = parse_program(SCAN)
    # 3 points before the loop; 5 steps of 3 points plus the per-execution overhead and the copy of
    # c (it reads its own target)
    from solar.ir.interp import STEP_OVERHEAD_POINTS

    assert program_cost(p) == 3 + 5 * (3 + STEP_OVERHEAD_POINTS + 18)


def test_counts_are_extent_times_body_exact_and_parametric():
    p = parse_program(SCAN)
    assert polyhedral.domain_size(p, p.stmts[1]) == 5 * 3
    q = parse_program(NESTED)
    assert [polyhedral.domain_size(q, s) for s in q.stmts] == [2, 8, 24, 24]
    r = parse_program(SCAN.replace("for s in 0..5 in order", "for s in 0..T in order").replace(
        "c[i, s + 1] = c[i, s] + x[i, s + 1]", "c[i, s] = x[i, s]"))
    assert polyhedral.domain_size(r, r.stmts[1], parametric=True).replace(" ", "") == "[T]->{3*T:T>0}"
    assert polyhedral.tensor_footprint(p, "x", "read") == 18


def test_lifted_nodes_carry_their_in_order_loops():
    nodes = lift(parse_program(NESTED)).nodes()
    assert [n.in_order for n in nodes] == [(), ("t",), ("t", "u"), ("t", "u")]
    assert dict(nodes[2].extents) == {"t": 4, "u": 3, "j": 2}


@pytest.mark.parametrize(
    "text, match",
    [
        (  # step 4 reads x[4]
            "program p {\n input x: f32[4]\n output y: f32[5]\n y[0] = 0\n"
            " for t in 0..4 in order {\n  y[t + 1] = y[t] + x[t + 1]\n }\n}",
            r"x\[t \+ 1\].*ranges over \[1, 4\]",
        ),
        (  # step 0 reads h before anything wrote it
            "program p {\n input x: f32[4]\n temp h: f32[4]\n output y: f32[4]\n"
            " for t in 0..4 in order {\n  y[t] = h[t]\n  h[t] = x[t]\n }\n}",
            r"reads temp 'h' before any earlier statement writes it\n    for t in 0..4 in order \{",
        ),
        (
            "program p {\n input x: f32[4]\n output y: f32[4]\n for t in 0..4 in order {\n"
            "  for t in 0..4:\n   y[t] = x[t]\n }\n}",
            "loop variable 't' is bound twice",
        ),
    ],
)
def test_verifier_checks_every_step(text, match):
    with pytest.raises(IRVerifyError, match=match):
        verify(parse_program(text))


@pytest.mark.parametrize(
    "text, match",
    [
        ("program p {\n output y: f32[4]\n for t in 0..4 in {\n  y[t] = 0\n }\n}", "expected 'order'"),
        ("program p {\n output y: f32[4]\n for t in 0..4 in order {\n  y[t] = 0\n}", "closing"),
    ],
)
def test_syntax_errors_of_in_order_loops(text, match):
    with pytest.raises(IRSyntaxError, match=match):
        parse_program(text)


def test_passes_do_not_propagate_a_constant_the_body_overwrites():
    """before: h = 0 then, in order, y[t] = h * x[t]; h = x[t]. Only step 0 sees h == 0, so the
    reader must stay whole (expected: the program unchanged)."""
    before = parse_program(
        "program p {\n  input x: f32[4, 2]\n  temp h: f32[2]\n  output y: f32[4, 2]\n"
        "  for j in 0..2:\n    h[j] = 0\n  for t in 0..4 in order {\n    for j in 0..2:\n"
        "      y[t, j] = h[j] * x[t, j]\n    for j in 0..2:\n      h[j] = x[t, j]\n  }\n}\n"
    )
    assert propagate(before) == before
    assert optimize(before) == before


def test_passes_propagate_a_constant_no_step_overwrites():
    """before: h[0] = 0, and in order g[t] = h[t] * 2; h[t + 1] = g[t] + x[t]. No step writes h[0],
    so expected: g's statement split into the step-0 constant and the multiply at t >= 1."""
    before = parse_program(
        "program p {\n  input x: f32[4]\n  temp g: f32[4]\n  temp h: f32[5]\n  output y: f32[4]\n"
        "  h[0] = 0\n  for t in 0..4 in order {\n    g[t] = h[t] * 2\n    h[t + 1] = g[t] + x[t]\n"
        "  }\n  for t in 0..4:\n    y[t] = h[t + 1]\n}\n"
    )
    expected = parse_program(
        "program p {\n  input x: f32[4]\n  temp g: f32[4]\n  temp h: f32[5]\n  output y: f32[4]\n"
        "  h[0] = 0\n  for t in 0..4 in order {\n    if t - 1 >= 0:\n      g[t] = h[t] * 2\n"
        "    if t == 0:\n      g[t] = 0\n    h[t + 1] = g[t] + x[t]\n  }\n"
        "  for t in 0..4:\n    y[t] = h[t + 1]\n}\n"
    )
    after = propagate(before)
    assert str(after) == str(expected)
    assert parse_program(str(after)) == after
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(run(after, {"x": x})["y"], run(before, {"x": x})["y"])
    verify(after)


def test_with_stmts_keeps_a_narrowed_in_order_loop_as_a_guard():
    p = parse_program(SCAN)
    flat = list(p.stmts)
    narrowed = flat[1].loops[0].__class__("s", 3)
    flat[1] = Stmt((narrowed, *flat[1].loops[1:]), flat[1].target, flat[1].update, flat[1].value)
    q = p.with_stmts(flat)
    (seq,) = [n for n in q.body if isinstance(n, Seq)]
    assert seq.extent == 5 and str(seq.body[0]).startswith("for i in 0..3 where -s + 2 >= 0:")
    assert p.with_stmts([flat[0], None]).body == p.body[:1]  # an emptied in-order loop is dropped
