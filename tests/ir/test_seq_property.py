"""Property test: random well-formed programs with in-order loops (carries in stacked slots and in
place, nested loops, guards on the step, reductions) print -> parse -> print to the same text, verify,
and the vectorised interpreter agrees with a naive one that visits every point in order."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solar.ir.affine import Affine, as_affine, ge, var
from solar.ir.dtypes import DType
from solar.ir.interp import run
from solar.ir.nodes import (
    Call,
    Const,
    Load,
    Loop,
    Program,
    Role,
    Seq,
    Stmt,
    Store,
    TensorDecl,
)
from solar.ir.parser import parse_program
from solar.ir.scalar_ops import OPS, ScalarOp, Update
from solar.ir.verify import verify

BINARY = (ScalarOp.ADD, ScalarOp.MUL, ScalarOp.MAX, ScalarOp.SUB)
UNARY = (ScalarOp.TANH, ScalarOp.SIGMOID, ScalarOp.NEG)
j = var("j")


def _ld(name: str, *index: Affine | int) -> Load:
    return Load(name, tuple(as_affine(e) for e in index))


@st.composite
def programs(draw) -> Program:
    """x: f32[T, N]; carries c_k: f32[T+1, N] (slot 0 initial, step t writes t+1) or in place
    h_k: f32[N]; an in-order loop over t whose body updates every carry from carries already
    available and x[t], optionally a guard on t, a reduction and a nested in-order loop."""
    steps, n = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    t = var("t")
    tensors = [TensorDecl("x", (steps, n), DType.F32, Role.INPUT)]
    body: list[Stmt | Seq] = []
    inits: list[Stmt] = []
    # each source: (how to load it at step t inside the body, available before its own update)
    sources = [lambda: _ld("x", t, j)]
    n_carry = draw(st.integers(1, 3))
    for k in range(n_carry):
        stacked = draw(st.booleans())
        name = f"c{k}" if stacked else f"h{k}"
        shape = (steps + 1, n) if stacked else (n,)
        tensors.append(TensorDecl(name, shape, DType.F32, Role.TEMP))
        init_index = (as_affine(0), j) if stacked else (j,)
        init_value = draw(st.sampled_from([Const(0.5), _ld("x", 0, j)]))
        inits.append(Stmt((Loop("j", n),), Store(name, init_index), Update.ASSIGN, init_value))
        prev = (lambda name=name: _ld(name, t, j)) if stacked else (lambda name=name: _ld(name, j))
        a = draw(st.sampled_from(sources))()
        value = Call(draw(st.sampled_from(BINARY)), (prev(), a))
        if draw(st.booleans()):
            value = Call(draw(st.sampled_from(UNARY)), (value,))
        index = (t + 1, j) if stacked else (j,)
        guards = (ge(t, 1),) if stacked and draw(st.booleans()) else ()
        if guards:  # the guarded-off step still has to carry the value on
            body.append(Stmt((Loop("j", n),), Store(name, index), Update.ASSIGN, prev(), (ge(-t, 0),)))
        body.append(Stmt((Loop("j", n),), Store(name, index), Update.ASSIGN, value, guards))
        now = (lambda name=name: _ld(name, t + 1, j)) if stacked else (lambda name=name: _ld(name, j))
        sources.append(now)
    last = sources[-1]
    # a per-step reduction over j into a stacked output
    tensors.append(TensorDecl("r", (steps,), DType.F32, Role.OUTPUT))
    body.append(Stmt((), Store("r", (t,)), Update.ASSIGN, Const(0.0)))
    body.append(Stmt((Loop("j", n),), Store("r", (t,)), Update.ADD, last()))
    if draw(st.booleans()):  # a nested in-order loop accumulating into an in-place tensor
        tensors.append(TensorDecl("g", (n,), DType.F32, Role.TEMP))
        u = var("u")
        inner = Stmt(
            (Loop("j", n),), Store("g", (j,)), Update.ASSIGN,
            Call(ScalarOp.ADD, (Call(ScalarOp.MUL, (_ld("g", j), Const(0.5))), _ld("x", u, j))),
        )
        inits.append(Stmt((Loop("j", n),), Store("g", (j,)), Update.ASSIGN, Const(0.0)))
        body.append(Seq("u", steps, (inner,)))
        body.append(Stmt((Loop("j", n),), Store("r", (t,)), Update.ADD, _ld("g", j)))
    tensors.append(TensorDecl("y", (n,), DType.F32, Role.OUTPUT))
    final = [Stmt((Loop("j", n),), Store("y", (j,)), Update.ASSIGN, _final(sources[-1], steps))]
    return Program("p", tuple(tensors), (*inits, Seq("t", steps, tuple(body)), *final))


def _final(load_at_t, steps: int) -> Load:
    """The last carry after the loop: the load with t replaced by its last value."""
    ld = load_at_t()
    return Load(ld.tensor, tuple(e.substitute({"t": as_affine(steps - 1)}) for e in ld.index))


# ---- a naive interpreter: every point, one at a time, in order -----------------------------------


def _naive(program: Program, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    arrays = {t.name: np.full(program.shape(t.name), np.nan, np.float32) for t in program.tensors}
    arrays.update({k: v.copy() for k, v in inputs.items()})

    def value(expr, env):
        match expr:
            case Const(v):
                return np.float32(v)
            case Load(name, index):
                return arrays[name][tuple(int(e.evaluate(env)) for e in index)]
            case Call(op, args):
                return np.float32(OPS[op].fn(*(value(a, env) for a in args)))
        raise TypeError(expr)

    def execute(body, env):
        for node in body:
            if isinstance(node, Seq):
                for step in range(program.size(node.extent)):
                    execute(node.body, {**env, node.var: step})
                continue
            ranges = [range(program.size(lp.extent)) for lp in node.loops]
            for point in itertools.product(*ranges):
                e = {**env, **dict(zip(node.loop_vars, point))}
                if not all(g.holds(e) for g in node.guards):
                    continue
                idx = tuple(int(a.evaluate(e)) for a in node.target.index)
                v = value(node.value, e)
                target = arrays[node.target.tensor]
                target[idx] = v if node.update is Update.ASSIGN else target[idx] + v

    execute(program.body, {})
    return {t.name: arrays[t.name] for t in program.with_role(Role.OUTPUT)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**31 - 1))
def test_random_in_order_programs_round_trip_and_run_as_the_naive_interpreter(program, seed):
    text = str(program)
    parsed = parse_program(text)
    assert str(parsed) == text
    assert parsed == program
    verify(program)
    x = np.random.default_rng(seed).standard_normal(program.shape("x")).astype(np.float32)
    got, expected = run(program, {"x": x}), _naive(program, {"x": x})
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-6)
