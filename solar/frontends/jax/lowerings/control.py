"""Call-like primitives (jit, closed_call, custom_jvp_call, custom_vjp_call, checkpoint), inlined
with the caller's op instance, and loops: `scan` and `while` loops with a static trip count
(fori_loop included) become one in-order loop around their body's statements, never unrolled
copies.

A loop is one op instance (one persistent kernel in the unfused bound): giving each body op its own
instance would charge per-step temporaries as if all T steps' values had to live in L2 at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

from solar.errors import SolarError
from solar.frontends.builder import loop_vars
from solar.frontends.jax.context import IndexValue, LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.frontends.jax.primitives import P
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.scalar_ops import Update


@lower(P.jit_p)
def _jit(ctx: LowerCtx, *args: Any, jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return ctx.inline(jaxpr, args)


@lower(P.closed_call_p, P.custom_jvp_call_p, P.custom_vjp_call_p)
def _call(ctx: LowerCtx, *args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return ctx.inline(call_jaxpr, args)


@lower(P.remat_p)
def _checkpoint(ctx: LowerCtx, *args: Any, jaxpr: Jaxpr | ClosedJaxpr, **_: Any) -> list[Any]:
    return ctx.inline(jaxpr, args)


# ---- loops ---------------------------------------------------------------------------------------


def _counters(body: Jaxpr, n_consts: int, init: Sequence[Any]) -> dict[int, int]:
    """Carries that are loop counters: an integer start, and a body that only adds a constant.
    They stay affine in the time variable (start + step*t) instead of living in a tensor."""
    producer = {v: e for e in body.eqns for v in e.outvars}
    out: dict[int, int] = {}
    for k, start in enumerate(init):
        if not (
            isinstance(start, IndexValue)
            or (isinstance(start, int) and not isinstance(start, bool))
        ):
            continue
        carry_in, carry_out = body.invars[n_consts + k], body.outvars[k]
        eqn = producer.get(carry_out)
        if eqn is None or eqn.primitive is not P.add_p:
            continue
        a, b = eqn.invars
        step = _int_literal(b if a is carry_in else a if b is carry_in else None)
        if step is not None:
            out[k] = step
    return out


def _int_literal(v: Any) -> int | None:
    if not isinstance(v, Literal):
        return None
    val = np.asarray(v.val)
    return int(val) if val.ndim == 0 and val.dtype.kind in "iu" else None


def _affine(x: Any) -> Affine:
    return x.expr if isinstance(x, IndexValue) else Affine(const=int(x))


def time_loop(
    ctx: LowerCtx,
    body: ClosedJaxpr,
    length: int,
    reverse: bool,
    consts: Sequence[Any],
    init: Sequence[Any],
    xs: Sequence[Any],
) -> list[Any]:
    """Lower `length` steps of `body(consts, carries, xs[t]) -> (carries, ys[t])` as one in-order
    loop over t.

    Carry k lives in a tensor c_k[0..length] (c_k[0] = init, step t writes c_k[t+1]) unless it is
    a counter; body values live in temps stacked along t (one slot per step); ys are those temps."""
    jaxpr = body.jaxpr
    n_carry = len(init)
    b = ctx.b
    tv = ctx.state.time_var(length)
    counters = _counters(jaxpr, len(consts), init)
    ctx.origin()
    tensors: dict[int, View] = {}
    for k, start in enumerate(init):
        if k not in counters:
            shape, dtype = ctx.out_avals[k]
            c = b.temp(f"carry{k}", (length + 1, *shape), dtype)
            loops, idx = loop_vars("i", shape)
            b.emit(loops, c.base, (Affine(), *idx), Update.ASSIGN, as_view(start, shape, dtype).at(idx))
            tensors[k] = c
    with b.in_order(tv, length, stack=True) as t:
        at_step = (length - 1) - t if reverse else t  # the position in xs / ys read at step t
        carries_in: list[Any] = []
        for k, start in enumerate(init):
            shape, dtype = ctx.out_avals[k]
            if k in counters:
                carries_in.append(IndexValue(_affine(start) + t * counters[k], dtype))
            else:
                carries_in.append(View(shape, dtype, lambda idx, c=tensors[k]: c.at((t, *idx))))
        xs_in = [
            View(x.shape[1:], x.dtype, lambda idx, x=x: x.at((at_step, *idx)))
            for x in map(as_view, xs)
        ]
        outs = ctx.inline(body, [*consts, *carries_in, *xs_in])
        ctx.origin()
        for k, c in tensors.items():
            shape, dtype = ctx.out_avals[k]
            loops, idx = loop_vars("i", shape)
            value = as_view(outs[k], shape, dtype).at(idx)
            b.emit(loops, c.base, (t + 1, *idx), Update.ASSIGN, value)
        ys = [
            _stacked(ctx, y, ctx.out_avals[n_carry + k][0][1:], ctx.out_avals[n_carry + k][1])
            for k, y in enumerate(outs[n_carry:])
        ]
    results: list[Any] = []
    for k in range(n_carry):
        shape, dtype = ctx.out_avals[k]
        if k in counters:
            final = _affine(init[k]) + counters[k] * length
            results.append(final.const if final.is_const else IndexValue(final, dtype))
        else:
            results.append(
                View(shape, dtype, lambda idx, c=tensors[k]: c.at((Affine(const=length), *idx)))
            )
    for whole in ys:
        if reverse:
            whole = View(
                whole.shape, whole.dtype,
                lambda idx, w=whole: w.at(((length - 1) - idx[0], *idx[1:])),
            )
        results.append(whole)
    return results


def _stacked(ctx: LowerCtx, y: Any, step_shape: tuple[int, ...], dtype: Any) -> View:
    """ys: the temp stacked along the innermost in-order loop holding y, or a copy of y into one."""
    b = ctx.b
    if not (isinstance(y, View) and y.base is not None and b.stacked_here(y.base)):
        copy = b.temp(f"{ctx.hint}_ys", step_shape, dtype)
        loops, idx = loop_vars("i", step_shape)
        b.emit(loops, copy.base, idx, Update.ASSIGN, as_view(y, step_shape, dtype).at(idx))
        y = copy
    return b.whole(y.base)


@lower(P.scan_p)
def _scan(
    ctx: LowerCtx,
    *args: Any,
    jaxpr: ClosedJaxpr,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
    **_: Any,
) -> list[Any]:
    consts = args[:num_consts]
    init = args[num_consts : num_consts + num_carry]
    xs = args[num_consts + num_carry :]
    return time_loop(ctx, jaxpr, int(length), bool(reverse), consts, init, xs)


def _trip_count(
    cond: ClosedJaxpr,
    cond_consts: Sequence[Any],
    init: Sequence[Any],
    body: Jaxpr,
    n_body_consts: int,
) -> int:
    """The number of iterations of `while carry[k] < bound: carry[k] += step` (the form fori_loop
    takes), when bound, start and step are constants; otherwise not static."""
    jaxpr = cond.jaxpr
    env = dict(zip(jaxpr.constvars, cond.consts)) | dict(zip(jaxpr.invars, [*cond_consts, *init]))
    carries = jaxpr.invars[len(cond_consts) :]
    counters = _counters(body, n_body_consts, init)
    if len(jaxpr.eqns) == 1 and jaxpr.eqns[0].outvars[0] is jaxpr.outvars[0]:
        eqn = jaxpr.eqns[0]
        a, b = eqn.invars
        if eqn.primitive is P.gt_p:
            a, b = b, a
        if eqn.primitive in (P.lt_p, P.gt_p) and a in carries:
            k = carries.index(a)
            bound = _int_literal(b) if isinstance(b, Literal) else env.get(b)
            start = init[k]
            if (
                k in counters
                and counters[k] > 0
                and isinstance(start, int)
                and isinstance(bound, int)
            ):
                return max(0, -(-(bound - start) // counters[k]))
    raise SolarError(
        "a while loop whose trip count is not static (solar understands `while i < N: i += step` "
        "with constant start, N and step, as lax.fori_loop with Python-int bounds produces)"
    )


@lower(P.while_p)
def _while(
    ctx: LowerCtx,
    *args: Any,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
    **_: Any,
) -> list[Any]:
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts : cond_nconsts + body_nconsts]
    init = args[cond_nconsts + body_nconsts :]
    trips = _trip_count(cond_jaxpr, cond_consts, init, body_jaxpr.jaxpr, body_nconsts)
    if trips == 0:
        return list(init)
    return time_loop(ctx, body_jaxpr, trips, False, body_consts, init, [])
