"""The IR passes (solar.passes): before / expected programs compared structurally, exact counts,
and every rewrite checked to keep the outputs (the interpreter runs before and after)."""

from __future__ import annotations

import numpy as np
import pytest

from solar.ir import polyhedral
from solar.ir.interp import run
from solar.ir.parser import parse_program
from solar.ir.verify import verify
from solar.lift import lift
from solar.passes import optimize

from solar.backends.work import graph_work, total

TRIL_OF_PRODUCT = """program p {
  input a: f32[6, 5]
  input b: f32[5, 6]
  temp mm: f32[6, 6]
  temp d: i64[6, 6]
  temp keep: bool[6, 6]
  output o: f32[6, 6]
  for i in 0..6, j in 0..6:
    mm[i, j] = 0.0
  for i in 0..6, j in 0..6, k in 0..5:
    mm[i, j] += a[i, k] * b[k, j]
  for i in 0..6, j in 0..6:
    d[i, j] = index(j) - index(i)
  for i in 0..6, j in 0..6:
    keep[i, j] = le(d[i, j], 0)
  for i in 0..6, j in 0..6:
    o[i, j] = where(keep[i, j], mm[i, j], 0.0)
}"""

TRIL_OF_PRODUCT_EXPECTED = """program p {
  input a: f32[6, 5]
  input b: f32[5, 6]
  temp mm: f32[6, 6]
  output o: f32[6, 6]
  for i in 0..6, j in 0..6 where i - j >= 0:
    mm[i, j] = 0.0
  for i in 0..6, j in 0..6, k in 0..5 where i - j >= 0:
    mm[i, j] += a[i, k] * b[k, j]
  for i in 0..6, j in 0..6 where -i + j - 1 >= 0:
    o[i, j] = 0.0
  for i in 0..6, j in 0..6 where i - j >= 0:
    o[i, j] = mm[i, j]
}"""

# softmax(where(j > i, -inf, q k^T)) v, written out: the -inf region must reach both contractions.
CAUSAL = """program p {
  input q: f32[8, 4]
  input k: f32[8, 4]
  input v: f32[8, 3]
  temp s: f32[8, 8]
  temp t: f32[8, 8]
  temp m: f32[8]
  temp e: f32[8, 8]
  temp l: f32[8]
  output o: f32[8, 3]
  for i in 0..8, j in 0..8:
    s[i, j] = 0.0
  for i in 0..8, j in 0..8, c in 0..4:
    s[i, j] += q[i, c] * k[j, c]
  for i in 0..8, j in 0..8:
    t[i, j] = where(gt(index(j), index(i)), -inf, s[i, j] * 0.5)
  for i in 0..8:
    m[i] = -inf
  for i in 0..8, j in 0..8:
    m[i] max= t[i, j]
  for i in 0..8, j in 0..8:
    e[i, j] = exp(t[i, j] - m[i])
  for i in 0..8:
    l[i] = 0.0
  for i in 0..8, j in 0..8:
    l[i] += e[i, j]
  for i in 0..8, j in 0..8:
    e[i, j] = e[i, j] / l[i]
  for i in 0..8, d in 0..3:
    o[i, d] = 0.0
  for i in 0..8, d in 0..3, j in 0..8:
    o[i, d] += e[i, j] * v[j, d]
}"""

# Only the first two columns of a relu are used; an unused temp is dead.
DEMAND = """program p {
  input x: f32[4, 6]
  temp r: f32[4, 6]
  temp unused: f32[4, 6]
  output o: f32[4, 2]
  for i in 0..4, j in 0..6:
    r[i, j] = max(x[i, j], 0.0)
  for i in 0..4, j in 0..6:
    unused[i, j] = exp(x[i, j])
  for i in 0..4, j in 0..2:
    o[i, j] = r[i, j] * 2.0
}"""

DEMAND_EXPECTED = """program p {
  input x: f32[4, 6]
  temp r: f32[4, 6]
  output o: f32[4, 2]
  for i in 0..4, j in 0..6 where -j + 1 >= 0:
    r[i, j] = max(x[i, j], 0.0)
  for i in 0..4, j in 0..2:
    o[i, j] = r[i, j] * 2.0
}"""

# A statement that reads its own target at another element is never split (its pieces would see
# each other's writes), and a gathered temp is demanded whole (read at more points than it has
# elements, it is not recomputed at each read either).
UNSAFE = """program p {
  input x: f32[6]
  input idx: i64[8]
  temp y: f32[6]
  temp g: f32[6]
  output o: f32[6]
  output h: f32[8]
  for i in 0..6:
    y[i] = x[i]
  for i in 0..6:
    y[i] = where(ge(index(i), 1), y[(i + 5) % 6] + 1.0, 0.0)
  for i in 0..6:
    o[i] = y[i]
  for i in 0..6:
    g[i] = exp(x[i])
  for i in 0..8:
    h[i] = g[ind(idx[i])]
}"""

# log_softmax then a gather of one class per row: the subtraction is done at the gathered points.
SINK = """program p {
  input x: f32[4, 10]
  input idx: i64[4]
  temp s: f32[4]
  temp y: f32[4, 10]
  output o: f32[4]
  for i in 0..4:
    s[i] = 0.0
  for i in 0..4, c in 0..10:
    s[i] += exp(x[i, c])
  for i in 0..4:
    s[i] = log(s[i])
  for i in 0..4, c in 0..10:
    y[i, c] = x[i, c] - s[i]
  for i in 0..4:
    o[i] = neg(y[i, ind(idx[i])])
}"""

SINK_EXPECTED = """program p {
  input x: f32[4, 10]
  input idx: i64[4]
  temp s: f32[4]
  output o: f32[4]
  for i in 0..4:
    s[i] = 0.0
  for i in 0..4, c in 0..10:
    s[i] += exp(x[i, c])
  for i in 0..4:
    s[i] = log(s[i])
  for i in 0..4:
    o[i] = neg(x[i, ind(idx[i])] - s[i])
}"""


def _inputs(program, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for t in program.tensors:
        if t.role.value in ("input", "param"):
            shape = program.shape(t.name)
            if t.dtype.kind == "int":
                out[t.name] = rng.integers(0, min(shape) if shape else 1, size=shape)
            else:
                out[t.name] = rng.standard_normal(shape).astype(t.dtype.numpy)
    if "idx" in out:
        out["idx"] = np.array([0, 5, 2, 3, 1, 4, 5, 0])[: program.shape("idx")[0]]
    return out


def _same_outputs(before, after) -> None:
    feed = _inputs(before)
    ref, got = (
        run(before, feed),
        run(after, {k: v for k, v in feed.items() if k in {t.name for t in after.tensors}}),
    )
    for name, value in ref.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6)


def _macs(program) -> int:
    return total(graph_work(lift(program)).values()).mac_count


@pytest.mark.parametrize(
    "before,expected",
    [
        (TRIL_OF_PRODUCT, TRIL_OF_PRODUCT_EXPECTED),
        (DEMAND, DEMAND_EXPECTED),
        (SINK, SINK_EXPECTED),
        (UNSAFE, None),
    ],
    ids=["tril-of-product", "demand", "sink", "unsafe-left-alone"],
)
def test_pass_output_is_expected_and_equivalent(before, expected):
    program = parse_program(before)
    after = optimize(program)
    verify(after)
    if expected is not None:
        assert str(after) == str(parse_program(expected))
    _same_outputs(program, after)


def test_tril_of_product_counts_only_the_kept_triangle():
    after = optimize(parse_program(TRIL_OF_PRODUCT))
    assert _macs(after) == 6 * 7 // 2 * 5


def test_unsafe_statements_are_not_split_and_gathered_temps_stay_whole():
    program = parse_program(UNSAFE)
    after = optimize(program)
    by_target = {s.target.tensor: [] for s in after.stmts}
    for s in after.stmts:
        by_target[s.target.tensor].append(s)
    assert len(by_target["y"]) == 2 and by_target["y"][1] == program.stmts[1]
    assert by_target["g"] == [program.stmts[3]]


def test_causal_mask_reaches_both_contractions_and_the_softmax():
    program = parse_program(CAUSAL)
    after = optimize(program)
    verify(after)
    _same_outputs(program, after)
    kept = 8 * 9 // 2
    assert _macs(after) == kept * 4 + kept * 3
    for s in after.stmts:
        if {"i", "j"} <= set(s.loop_vars):
            assert polyhedral.domain_size(after, s) <= kept * program.extents(s).get(
                "c", 1
            ) * program.extents(s).get("d", 1)
    # no statement writes the masked region any more: it is never read
    assert all(not (s.target.tensor == "t" and "-inf" in str(s.value)) for s in after.stmts)


def test_identity_accumulations_are_dropped():
    program = parse_program("""program p {
  input x: f32[4]
  output o: f32[4]
  for i in 0..4:
    o[i] = x[i]
  for i in 0..4, j in 0..3:
    o[i] += x[i] * 0.0
  for i in 0..4, j in 0..3:
    o[i] max= -inf
}""")
    after = optimize(program)
    assert len(after.stmts) == 1
    _same_outputs(program, after)


CHAIN = """program p {
  input x: f32[16]
  temp a: f32[16]
  temp b: f32[16]
  temp c: f32[16]
  output o: f32[4]
  for i in 0..16:
    a[i] = exp(x[i])
  for i in 0..16:
    b[i] = a[i] * 2.0
  for i in 0..16:
    c[i] = b[i] + 1.0
  for i in 0..4:
    o[i] = c[i + 3]
}"""


def test_demand_travels_back_a_chain_and_a_second_run_reuses_the_regions():
    """Each temp is restricted to the elements its reader demands (3 <= i < 7), the producer of a
    producer too; running the passes again gives the same program, and restricting the very same
    statements again takes every demanded region from demand's memo."""
    from solar.passes import demand, restrict

    program = parse_program(CHAIN)
    first = optimize(program)
    assert [polyhedral.domain_size(first, s) for s in first.stmts] == [4] * len(first.stmts)
    _same_outputs(program, first)
    assert str(optimize(program)) == str(first)
    demand._SEEN.clear()
    assert str(restrict(first)) == str(first)
    size = len(demand._SEEN)
    assert size > 0
    assert restrict(first).stmts == first.stmts
    assert len(demand._SEEN) == size  # nothing new was computed for the same statements