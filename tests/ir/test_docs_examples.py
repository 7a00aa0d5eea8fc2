"""Every ```ir example of docs/IR.md parses, round-trips through the printer, verifies, and runs in
the interpreter to the values of a plain numpy reference."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from solar.ir.interp import run
from solar.ir.nodes import Role
from solar.ir.parser import parse_program
from solar.ir.verify import verify

DOC = Path(__file__).resolve().parents[2] / "docs" / "IR.md"
EXAMPLES = re.findall(r"```ir\n(.*?)```", DOC.read_text(), re.S)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _matmul(A, B):
    return {"C": A @ B}


def _causal_attention(Q, K, V):
    s = Q @ K.T
    s = np.where(np.tril(np.ones_like(s)) > 0, s, -np.inf) * 0.5
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return {"O": (p / p.sum(axis=1, keepdims=True)) @ V}


def _lstm(x, W, U, b):
    h, c, ys = np.zeros(2), np.zeros(2), []
    for t in range(x.shape[0]):
        g = W @ x[t] + U @ h + b
        c = _sigmoid(g[2:4]) * c + _sigmoid(g[0:2]) * np.tanh(g[4:6])
        h = _sigmoid(g[6:8]) * np.tanh(c)
        ys.append(h)
    return {"y": np.stack(ys)}


REFERENCES = {"matmul": _matmul, "causal_attention": _causal_attention, "lstm": _lstm}


def test_the_reference_has_the_three_worked_examples():
    assert sorted(parse_program(text).name for text in EXAMPLES) == sorted(REFERENCES)


@pytest.mark.parametrize("text", EXAMPLES, ids=lambda t: t.split()[1])
def test_example_parses_round_trips_verifies_and_runs(text):
    program = parse_program(text)
    assert parse_program(str(program)) == program
    verify(program)
    rng = np.random.default_rng(0)
    args = {
        t.name: rng.standard_normal(program.shape(t.name)).astype(np.float32)
        for t in program.tensors
        if t.role in (Role.INPUT, Role.PARAM)
    }
    expected = REFERENCES[program.name](*args.values())
    got = run(program, args)
    assert got.keys() == expected.keys()
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-6)
