"""Output comparison for JAX programs (`solar verify`): run the IR (in-order loops step by step)
and the traced program itself on the same random inputs and compare. At full size
when the interpreter can afford it; otherwise every distinct equation on its own (loops as a whole
when affordable, else their bodies' equations), at its shapes or at reduced shapes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax.extend.core import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, jaxpr_as_fun

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import ProgramBuilder
from solar.frontends.compare import (
    FULL_BUDGET,
    Attempt,
    Check,
    CheckResult,
    capped,
    check_instance,
    conv_sizes,
    compare,
    one_line,
    program_tolerance,
)
from solar.frontends.jax.context import Lowering, dtype_of
from solar.frontends.jax.convert import (
    convert,
    literal_value,
    lower_prim,
    materialise_outputs,
    program_outputs,
    source_text,
    user_frames,
)
from solar.frontends.jax.loader import JaxTraced, trace_callable, trace_file
from solar.frontends.jax.primitives import P
from solar.ir.interp import program_cost
from solar.ir.nodes import Program, Role
from solar.ir.verify import verify

CALLS = {
    P.jit_p: "jaxpr",
    P.closed_call_p: "call_jaxpr",
    P.custom_jvp_call_p: "call_jaxpr",
    P.custom_vjp_call_p: "call_jaxpr",
    P.remat_p: "jaxpr",
}
LOOPS = {P.scan_p: ("jaxpr",), P.while_p: ("body_jaxpr",)}

Aval = tuple[tuple[int, ...], Any]  # (shape, numpy dtype)


@dataclass(frozen=True)
class Same:
    """An operand that is the same value as operand `k` (`x * x`): one input, one array."""

    k: int


def check_file(path: str | Path, seed: int = 0) -> CheckResult:
    return check_traced(trace_file(path), seed)


def check_callable(fn_or_module: Any, inputs: Sequence[Any], seed: int = 0) -> CheckResult:
    return check_traced(trace_callable(fn_or_module, inputs), seed)


def check_traced(traced: JaxTraced, seed: int = 0, whole: bool | None = None) -> CheckResult:
    """Whole program (`whole=True`), every equation on its own (False), or whichever the
    interpreter budget allows (None)."""
    program, bindings, outputs = convert(traced)
    if whole if whole is not None else program_cost(program) <= FULL_BUDGET:
        return CheckResult(program.name, (_check_whole(traced, program, bindings, outputs, seed),))
    return CheckResult(program.name, check_eqns(traced.jaxpr, seed, traced.source_file))


# ---- data ----------------------------------------------------------------------------------------


def random_array(shape: tuple[int, ...], dtype: Any, rng: np.random.Generator) -> np.ndarray:
    """Standard-normal floats, integers in 1..7, fair bools."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(1, 8, shape).astype(dt)  # never 0: a divisor, an index below 8
    return rng.standard_normal(shape).astype(np.float32).astype(dt)


def _param_array(aval: Any, rng: np.random.Generator) -> np.ndarray:
    shape, dt = tuple(aval.shape), np.dtype(aval.dtype)
    if dt.kind != "f" and dt.name not in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return random_array(shape, dt, rng)
    return rng.uniform(0.5, 1.5, shape).astype(np.float32).astype(dt)


def to_numpy(x: Any) -> np.ndarray:
    """A float32 copy for dtypes numpy cannot compute in (bf16, fp8), else the array itself."""
    arr = np.asarray(x)
    if arr.dtype.kind == "V" or arr.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return arr.astype(np.float32)
    return arr


def _describe(shapes: Sequence[Any]) -> str:
    return ", ".join(
        f"{np.dtype(d).name}{list(s)}" if isinstance(s, tuple) else repr(s) for s, d in shapes
    )


# ---- whole programs ------------------------------------------------------------------------------


def _check_whole(
    traced: JaxTraced, program: Program, bindings: dict, outputs: Sequence[str], seed: int
) -> Check:
    """Inputs are standard normal; float parameters are uniform in [0.5, 1.5) (a variance or a
    scale below zero would make NaNs, whose propagation XLA and numpy reductions do not share)."""
    rng = np.random.default_rng(seed)
    jaxpr = traced.jaxpr.jaxpr
    args = [
        _param_array(v.aval, rng)
        if arg.kind == "param"
        else random_array(tuple(v.aval.shape), v.aval.dtype, rng)
        for v, arg in zip(jaxpr.invars, traced.args)
    ]
    consts = list(traced.jaxpr.consts)
    feed = {
        name: to_numpy(consts[b.index] if b.kind == "const" else args[b.index])
        for name, b in bindings.items()
    }
    refs = [to_numpy(r) for r in jax.jit(jaxpr_as_fun(traced.jaxpr))(*args)]
    error = compare(program, feed, outputs, refs)
    shapes = _describe([(tuple(v.aval.shape), v.aval.dtype) for v in jaxpr.invars])
    return Check("whole program", "", shapes, "full", error, program_tolerance(program))


# ---- one equation at a time ----------------------------------------------------------------------


def check_eqns(
    closed: ClosedJaxpr, seed: int = 0, source_file: str | None = None
) -> tuple[Check, ...]:
    """Check every distinct equation (primitive, parameters, operand types) on its own."""
    seen: set[str] = set()
    checks: list[Check] = []
    _walk(closed.jaxpr, seed, source_file, seen, checks)
    return tuple(checks)


def _walk(
    jaxpr: Jaxpr, seed: int, source_file: str | None, seen: set[str], checks: list[Check]
) -> None:
    for eqn in jaxpr.eqns:
        if eqn.primitive in CALLS:
            inner = eqn.params[CALLS[eqn.primitive]]
            _walk(
                inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner,
                seed,
                source_file,
                seen,
                checks,
            )
            continue
        key = f"{eqn.primitive}|{eqn.params}|{[_operand_key(v) for v in eqn.invars]}"
        if key in seen:
            continue
        seen.add(key)
        check = check_eqn(eqn, seed, source_file, reduce=eqn.primitive not in LOOPS)
        if check is None:  # a loop too large to run whole: check its body's equations
            for name in LOOPS[eqn.primitive]:
                _walk(eqn.params[name].jaxpr, seed, source_file, seen, checks)
            continue
        checks.append(check)


def _operand_key(v: Any) -> str:
    if isinstance(v, Literal):
        return f"lit:{literal_value(v)!r}:{v.aval.dtype}"
    return f"{v.aval.dtype}{list(v.aval.shape)}"


def lower_single(
    prim: Any,
    params: dict[str, Any],
    operands: Sequence[Aval | Any],
    out_avals: Sequence[Aval],
    source: str = "",
) -> tuple[Program, dict[int, str], list[str]]:
    """A program of one equation: tensor operands (given as (shape, dtype)) become inputs, other
    operands are literal values; returns the program, the input name of each tensor operand and
    the output names."""
    b = ProgramBuilder.new(prim.name)
    state = Lowering(b)
    args: list[Any] = []
    names: dict[int, str] = {}
    for k, op in enumerate(operands):
        if isinstance(op, Same):
            args.append(args[op.k])
        elif isinstance(op, tuple):
            shape, dtype = op
            name = b.declare(f"in{k}", shape, dtype_of(dtype), Role.INPUT)
            names[k] = name
            args.append(views.tensor(name, shape, dtype_of(dtype)))
        else:
            args.append(op)
    outs_avals = tuple((tuple(s), dtype_of(d)) for s, d in out_avals)
    outs = lower_prim(state, b, prim, params, args, outs_avals, state.fresh_instance(), source)
    out_names = materialise_outputs(b, outs, outs_avals)
    program = b.program(program_outputs(b, out_names))
    verify(program)
    return program, names, out_names


def check_eqn(
    eqn: JaxprEqn, seed: int, source_file: str | None = None, reduce: bool = True
) -> Check | None:
    """Compare one equation's lowering with the primitive itself on random data: at its own
    shapes when affordable, else at reduced shapes (None when not affordable and `reduce` is off)."""
    frames = user_frames(eqn, source_file)
    src = source_text(frames[0] if frames else None)
    prim = eqn.primitive
    first: dict[Any, int] = {}
    operands: list[Any] = []
    for k, v in enumerate(eqn.invars):
        if isinstance(v, Literal):
            operands.append(literal_value(v))
        elif v in first:
            operands.append(Same(first[v]))
        else:
            first[v] = k
            operands.append((tuple(int(s) for s in v.aval.shape), v.aval.dtype))
    out_avals = [(tuple(int(s) for s in v.aval.shape), v.aval.dtype) for v in eqn.outvars]
    lit_dtypes = [v.aval.dtype if isinstance(v, Literal) else None for v in eqn.invars]
    try:
        program, _, _ = lower_single(prim, eqn.params, operands, out_avals, src)
    except SolarError as exc:  # needs its context (e.g. a loop counter as an index): the
        # enclosing loop's own check covers it when that one is affordable
        note = str(exc).split("\n", 1)[0]
        return Check(prim.name, src, _describe(_shapes(operands)), "unchecked", math.inf, 0.0, note)

    def attempt(cap: int | None) -> Attempt | str:
        ops, params = (
            (operands, eqn.params)
            if cap is None
            else SHRINKERS.get(prim, _shrink)(operands, eqn.params, cap)
        )
        rng = np.random.default_rng(seed)
        data: list[Any] = []
        for o, d in zip(ops, lit_dtypes):
            if isinstance(o, Same):
                data.append(data[o.k])
            else:
                data.append(
                    random_array(o[0], o[1], rng) if isinstance(o, tuple) else np.asarray(o, dtype=d)
                )
        if prim in DATA:
            data = DATA[prim](data, params, rng)
        try:
            ref = _evaluate(eqn, data) if cap is None else prim.bind(*data, **params)
        except Exception as exc:  # reduced shapes this primitive does not accept
            return one_line(exc)
        refs = list(ref) if prim.multiple_results else [ref]
        shrunk_outs = [(tuple(np.shape(r)), np.asarray(r).dtype) for r in refs]
        program, names, outs = lower_single(prim, params, ops, shrunk_outs, src)
        feed = {name: to_numpy(data[k]) for k, name in names.items()}
        refs = [to_numpy(r) for r in refs]
        return Attempt(program, feed, outs, refs, _describe(_shapes(ops)))

    shapes = _describe(_shapes(operands))
    return check_instance(prim.name, src, shapes, program_cost(program), attempt, reduce)


def _evaluate(eqn: JaxprEqn, data: Sequence[Any]) -> Any:
    """Run one equation as JAX would inside its jaxpr (call primitives need jaxpr evaluation)."""
    ins = [v for v in eqn.invars if not isinstance(v, Literal)]
    outs = [Var(v.aval) if isinstance(v, DropVar) else v for v in eqn.outvars]
    one = ClosedJaxpr(Jaxpr([], ins, outs, [eqn.replace(outvars=outs)]), [])
    values = jaxpr_as_fun(one)(*(x for x, v in zip(data, eqn.invars) if not isinstance(v, Literal)))
    return values if eqn.primitive.multiple_results else values[0]


def _shapes(ops: Sequence[Any]) -> list[Any]:
    return [
        o if isinstance(o, tuple) else (o, np.asarray(o).dtype)
        for o in ops
        if not isinstance(o, Same)
    ]


# ---- smaller versions of an equation -------------------------------------------------------------


def _shrink(
    operands: Sequence[Any], params: dict[str, Any], cap: int
) -> tuple[list[Any], dict[str, Any]]:
    """Every size and integer parameter above `cap` mapped to `cap`."""
    ops = [(capped(o[0], cap), o[1]) if isinstance(o, tuple) else o for o in operands]
    return ops, {k: capped(v, cap) for k, v in params.items()}


def _shrink_conv(
    operands: Sequence[Any], params: dict[str, Any], cap: int
) -> tuple[list[Any], dict[str, Any]]:
    """A smaller convolution of the same kind: batch, groups, channels per group and spatial sizes
    shrink; strides, padding, dilations, kernel and layout stay."""
    (xs, xd), (ws, wd) = operands[0], operands[1]
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    groups = params["feature_group_count"]
    n_spatial = len(params["window_strides"])
    n, g, cin_g, cout_g, spatial = conv_sizes(
        cap,
        xs[lhs_spec[0]],
        groups,
        ws[rhs_spec[1]],
        ws[rhs_spec[0]] // groups,
        [xs[lhs_spec[2 + d]] for d in range(n_spatial)],
        [ws[rhs_spec[2 + d]] for d in range(n_spatial)],
        params["rhs_dilation"],
    )
    x, w = list(xs), list(ws)
    x[lhs_spec[0]], x[lhs_spec[1]] = n, g * cin_g
    w[rhs_spec[0]], w[rhs_spec[1]] = g * cout_g, cin_g
    for d in range(n_spatial):
        x[lhs_spec[2 + d]] = spatial[d]
    ops = [(tuple(x), xd), (tuple(w), wd), *operands[2:]]
    return ops, dict(params, feature_group_count=g)


def _shrink_reshape(
    operands: Sequence[Any], params: dict[str, Any], cap: int
) -> tuple[list[Any], dict[str, Any]]:
    """Dimensions a reshape keeps at the front and at the back shrink; the regrouped middle stays
    (shrinking it by value would break the element count)."""
    (shape, dtype), new = operands[0], list(params["new_sizes"])
    old = list(shape)
    n = 0
    while n < min(len(old), len(new)) and old[n] == new[n]:
        old[n] = new[n] = min(old[n], cap)
        n += 1
    m = 1
    while m <= min(len(old), len(new)) - n and old[-m] == new[-m]:
        old[-m] = new[-m] = min(old[-m], cap)
        m += 1
    return [(tuple(old), dtype), *operands[1:]], dict(params, new_sizes=tuple(new))


SHRINKERS = {P.conv_general_dilated_p: _shrink_conv, P.reshape_p: _shrink_reshape}


def _gather_data(data: list[Any], params: dict[str, Any], rng: np.random.Generator) -> list[Any]:
    """Start indices inside the operand (the IR takes gather indices as in bounds)."""
    operand, indices = data[0], data[1]
    dn = params["dimension_numbers"]
    highs = [operand.shape[d] - params["slice_sizes"][d] + 1 for d in dn.start_index_map]
    fresh = np.stack([rng.integers(0, h, indices.shape[:-1]) for h in highs], axis=-1)
    return [operand, fresh.astype(indices.dtype), *data[2:]]


DATA = {P.gather_p: _gather_data}

__all__ = [
    "Check",
    "CheckResult",
    "check_callable",
    "check_eqn",
    "check_eqns",
    "check_file",
    "check_traced",
    "lower_single",
]
