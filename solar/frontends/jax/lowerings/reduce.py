"""Reductions (sum, max, min, prod, and, or), windowed reductions (pooling), argmax/argmin, and
cumulative primitives.

Cumulative ops are in-order loops over the scanned axis:
out[0] = x[0]; out[t+1] = out[t] (op) x[t+1] for t in 0..N-2 in order. That is N-1 applications of the op
per row, the least any implementation does (a triangular sum would count N(N+1)/2)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from solar.frontends import views
from solar.frontends.builder import (
    Term,
    add,
    call,
    const,
    identity,
    index_value,
    loop_vars,
    reduce,
    scan,
    sub,
)
from solar.frontends.jax.context import LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.frontends.jax.primitives import P
from solar.frontends.views import View
from solar.ir.affine import Affine, Constraint, ge, lt
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

REDUCTIONS: dict[Any, Update] = {
    P.reduce_sum_p: Update.ADD,
    P.reduce_max_p: Update.MAX,
    P.reduce_min_p: Update.MIN,
    P.reduce_prod_p: Update.MUL,
    P.reduce_and_p: Update.MIN,  # on bools: min is and
    P.reduce_or_p: Update.MAX,  # on bools: max is or
}


def _reduction_rule(update: Update) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: Any, *, axes: Sequence[int], **_: Any) -> View:
        x = as_view(x, (), ctx.dtype)
        return reduce(ctx.b, ctx.hint, x, list(axes), False, update, ctx.dtype)

    return rule


for _prim, _update in REDUCTIONS.items():
    lower(_prim)(_reduction_rule(_update))


def _arg_rule(update: Update) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: Any, *, axes: Sequence[int], index_dtype: Any) -> View:
        """The first position of the extreme: m = max (or min) over the axis, then the least index
        where x == m (a NaN extreme is not matched)."""
        x = as_view(x)
        (axis,) = axes
        m = reduce(ctx.b, f"{ctx.hint}_value", x, [axis], True, update, x.dtype)
        n = x.shape[axis]

        def first(t: Term, idx: tuple[Affine, ...]) -> Term:
            hit = call(S.EQ, t, views.expand(m, x.shape).at(idx))
            return call(S.WHERE, hit, index_value(idx[axis]), n)

        return reduce(ctx.b, ctx.hint, x, [axis], False, Update.MIN, ctx.dtype, value=first)

    return rule


WINDOWS: dict[Any, Update] = {
    P.reduce_window_sum_p: Update.ADD,
    P.reduce_window_max_p: Update.MAX,
    P.reduce_window_min_p: Update.MIN,
}


def _window_rule(update: Update) -> Callable[..., View]:
    def rule(
        ctx: LowerCtx,
        x: Any,
        *,
        window_dimensions: Sequence[int],
        window_strides: Sequence[int],
        padding: Sequence[tuple[int, int]],
        base_dilation: Sequence[int],
        window_dilation: Sequence[int],
    ) -> View:
        """Pooling: out[o] (update)= x[(o*s + w*wd - lo) / bd] over the window positions w that
        land on a real element (padding and base-dilation holes hold the identity: guarded off)."""
        x = as_view(x)
        b = ctx.b
        out = b.temp(ctx.hint, ctx.shape, ctx.dtype)
        out_loops, o = loop_vars("i", ctx.shape)
        win_loops, w = loop_vars("r", window_dimensions)
        b.emit(out_loops, out.base, o, Update.ASSIGN, const(identity(update, ctx.dtype)))
        index, guards = [], []
        for d, n in enumerate(x.shape):
            p = o[d] * window_strides[d] + w[d] * window_dilation[d] - padding[d][0]
            bd = base_dilation[d]
            guards += [ge(p, 0), lt(p, (n - 1) * bd + 1)]
            if bd > 1:
                guards.append(Constraint(p % bd, equality=True))
            index.append(p // bd)
        b.emit(out_loops + win_loops, out.base, o, update, x.at(tuple(index)), guards)
        return out

    return rule


for _prim, _update in WINDOWS.items():
    lower(_prim)(_window_rule(_update))


lower(P.argmax_p)(_arg_rule(Update.MAX))
lower(P.argmin_p)(_arg_rule(Update.MIN))


def _logaddexp(a: Term, b: Term) -> Term:
    """log(exp(a) + exp(b)) = max + log1p(exp(min - max))."""
    hi, lo = call(S.MAX, a, b), call(S.MIN, a, b)
    return add(hi, call(S.LOG1P, call(S.EXP, sub(lo, hi))))


CUMULATIVE: dict[Any, Callable[[Term, Term], Term]] = {
    P.cumsum_p: add,
    P.cumprod_p: lambda a, b: call(S.MUL, a, b),
    P.cummax_p: lambda a, b: call(S.MAX, a, b),
    P.cummin_p: lambda a, b: call(S.MIN, a, b),
    P.cumlogsumexp_p: _logaddexp,
}


def _cumulative_rule(op: Callable[[Term, Term], Term]) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: Any, *, axis: int, reverse: bool) -> View:
        x = as_view(x)
        step = ctx.state.time_var(x.shape[axis] - 1)
        return scan(ctx.b, ctx.hint, x, axis, ctx.dtype, op, reverse, step)

    return rule


for _prim, _op in CUMULATIVE.items():
    lower(_prim)(_cumulative_rule(_op))

__all__ = ["CUMULATIVE", "REDUCTIONS", "WINDOWS"]
