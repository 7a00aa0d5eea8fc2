"""The passes around in-order loops, as before / expected programs: a barrier for sinking, transparent
to demand; and the verifier between passes naming the pass that broke a program."""

from __future__ import annotations

import numpy as np
import pytest

from solar.errors import IRVerifyError
from solar.ir.interp import run
from solar.ir.parser import parse_program
from solar.passes import optimize
from solar.passes.demand import restrict
from solar.passes.inline import sink

HEAD = "program p {\n  input x: f32[4, 8]\n"


def _same_outputs(before, after):
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    a, b = run(before, {"x": x}), run(after, {"x": x})
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-6)


CASES = {
    # a producer inside an in-order loop is never sunk into its readers (its sources change per step)
    "sink_barrier": (
        sink,
        HEAD + "  temp e: f32[8]\n  temp h: f32[5, 8]\n  output y: f32[8]\n"
        "  for j in 0..8:\n    h[0, j] = 0\n"
        "  for t in 0..4 in order {\n    for j in 0..8:\n      e[j] = exp(h[t, j] + x[t, j])\n"
        "    for j in 0..8:\n      h[t + 1, j] = e[j] * 0.5\n  }\n"
        "  for j in 0..1:\n    y[j] = e[j]\n  for j in 0..8:\n    y[j] = h[4, j]\n}\n",
        None,
    ),
    # a temp written inside the loop that reaches no output is dead; the loop stays
    "dead_inside": (
        restrict,
        HEAD + "  temp d: f32[4, 8]\n  temp h: f32[5, 8]\n  output y: f32[8]\n"
        "  for j in 0..8:\n    h[0, j] = 0\n"
        "  for t in 0..4 in order {\n    for j in 0..8:\n      d[t, j] = exp(x[t, j])\n"
        "    for j in 0..8:\n      h[t + 1, j] = h[t, j] + x[t, j]\n  }\n"
        "  for j in 0..8:\n    y[j] = h[4, j]\n}\n",
        HEAD + "  temp d: f32[4, 8]\n  temp h: f32[5, 8]\n  output y: f32[8]\n"
        "  for j in 0..8:\n    h[0, j] = 0\n"
        "  for t in 0..4 in order {\n"
        "    for j in 0..8:\n      h[t + 1, j] = h[t, j] + x[t, j]\n  }\n"
        "  for j in 0..8:\n    y[j] = h[4, j]\n}\n",
    ),
    # demand sees through the loop: the body reads only columns 0..1 of e
    "demand_through": (
        restrict,
        HEAD + "  temp e: f32[4, 8]\n  temp h: f32[5, 2]\n  output y: f32[2]\n"
        "  for t in 0..4, j in 0..8:\n    e[t, j] = exp(x[t, j])\n"
        "  for j in 0..2:\n    h[0, j] = 0\n"
        "  for t in 0..4 in order {\n    for j in 0..2:\n      h[t + 1, j] = h[t, j] + e[t, j]\n  }\n"
        "  for j in 0..2:\n    y[j] = h[4, j]\n}\n",
        HEAD + "  temp e: f32[4, 8]\n  temp h: f32[5, 2]\n  output y: f32[2]\n"
        "  for t in 0..4, j in 0..8 where -j + 1 >= 0:\n    e[t, j] = exp(x[t, j])\n"
        "  for j in 0..2:\n    h[0, j] = 0\n"
        "  for t in 0..4 in order {\n    for j in 0..2:\n      h[t + 1, j] = h[t, j] + e[t, j]\n  }\n"
        "  for j in 0..2:\n    y[j] = h[4, j]\n}\n",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pass_on_in_order_loops(name):
    run_pass, before, expected = CASES[name]
    program = parse_program(before)
    after = run_pass(program)
    assert str(after) == (before if expected is None else str(parse_program(expected)))
    _same_outputs(program, after)
    _same_outputs(program, optimize(program, verify_each=True))


def test_verifier_between_passes_names_the_pass():
    broken = parse_program(
        "program p {\n  input x: f32[4]\n  output y: f32[4]\n  for i in 0..4:\n    y[i + 1] = x[i]\n}"
    )
    with pytest.raises(IRVerifyError, match=r"after pass solar\.passes\.structure\.propagate: .*ranges over \[1, 4\]"):
        optimize(broken, verify_each=True)
