"""Reductions: sum, mean, amax/amin, arg-reductions and max/min with indices, prod, variance (and
the one-pass moments the norms use), vector norms, any/all. Arg-reductions are a max (min)
reduction plus an index selection, both in compare-class ops only: the index pass keeps the
smallest position whose element equals the extremum (PyTorch's first occurrence). An index output the program never reads costs nothing: the
demand pass (solar/passes/demand.py) removes its statements."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from solar.frontends import views
from solar.frontends.builder import (
    Term,
    call,
    cast,
    const,
    elementwise,
    index_value,
    loop_vars,
    mul,
    reduce,
)
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

# Ops the loader should keep whole rather than decompose (all() decomposes to not-any-not).
PRESERVE = frozenset({aten.all.dim, aten.all.dims, aten.all.default})


# ---- sum, mean, amax, amin -----------------------------------------------------------------------


def _dims(x: View, dims: Sequence[int] | int | None) -> list[int]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(x.rank))
    if isinstance(dims, int):
        dims = [dims]
    return [d % max(x.rank, 1) for d in dims]


def scale_in_place(ctx: LowerCtx, out: View, factor: float) -> None:
    """out[i] *= factor (a mean's division by the count)."""
    loops, idx = loop_vars("i", out.shape)
    ctx.b.emit(loops, out.base, idx, Update.ASSIGN, mul(out.at(idx), factor))


@lower(aten.sum.dim_IntList)
def _sum(ctx: LowerCtx, x: View, dims: Any = None, keepdim: bool = False, **kwargs: Any) -> View:
    return reduce(ctx.b, ctx.hint, x, _dims(x, dims), keepdim, Update.ADD, ctx.dtype)


@lower(aten.sum.default)
def _sum_all(ctx: LowerCtx, x: View, **kwargs: Any) -> View:
    return reduce(ctx.b, ctx.hint, x, _dims(x, None), False, Update.ADD, ctx.dtype)


@lower(aten.mean.dim)
def _mean(ctx: LowerCtx, x: View, dims: Any = None, keepdim: bool = False, **kwargs: Any) -> View:
    d = _dims(x, dims)
    out = reduce(ctx.b, ctx.hint, x, d, keepdim, Update.ADD, ctx.dtype)
    n = math.prod(x.shape[k] for k in d)
    scale_in_place(ctx, out, 1.0 / n if n else math.nan)  # a mean over no elements is nan, as in torch
    return out


@lower(aten.mean.default)
def _mean_all(ctx: LowerCtx, x: View, **kwargs: Any) -> View:
    return _mean(ctx, x, None, False)


@lower(aten.amax.default)
def _amax(ctx: LowerCtx, x: View, dims: Any = (), keepdim: bool = False) -> View:
    return reduce(ctx.b, ctx.hint, x, _dims(x, dims), keepdim, Update.MAX, ctx.dtype)


@lower(aten.amin.default)
def _amin(ctx: LowerCtx, x: View, dims: Any = (), keepdim: bool = False) -> View:
    return reduce(ctx.b, ctx.hint, x, _dims(x, dims), keepdim, Update.MIN, ctx.dtype)


# ---- arg-reductions, max/min with indices, prod -------------------------------------------------


def dims_of(x: View, dims: Sequence[int] | int | None) -> list[int]:
    """The reduced dims, each once, in order (all of them for None or [])."""
    return sorted(set(_dims(x, dims)))


def in_place(ctx: LowerCtx, out: View, fn: Callable[[Term], Term]) -> View:
    """out[i] = fn(out[i]): a finishing step over a reduction's result."""
    loops, idx = loop_vars("i", out.shape)
    ctx.b.emit(loops, out.base, idx, Update.ASSIGN, fn(out.at(idx)))
    return out


def _flat(x: View, dim: int | None) -> tuple[View, int]:
    """The view and axis an arg-reduction scans (all elements in row-major order for dim None)."""
    if dim is None:
        return views.reshape(x, (x.numel,)), 0
    return x, dim % max(x.rank, 1)


def arg_index(ctx: LowerCtx, x: View, d: int, ext: View, keepdim: bool, hint: str) -> View:
    """The first position along axis d where x equals its extremum ext (kept-dim shape)."""
    n = x.shape[d] if x.rank else 1
    ext_full = views.expand(ext, x.shape)

    def first(t: Term, i: tuple[Affine, ...]) -> Term:
        pos = index_value(i[d]) if x.rank else const(0)
        return call(S.WHERE, call(S.EQ, t, ext_full.at(i)), pos, n)

    dims = [d] if x.rank else []
    return reduce(ctx.b, hint, x, dims, keepdim, Update.MIN, DType.I64, value=first)


def _arg(update: Update) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: View, dim: int | None = None, keepdim: bool = False) -> View:
        xv, d = _flat(x, dim)
        dims = [d] if xv.rank else []
        ext = reduce(ctx.b, f"{ctx.hint}_ext", xv, dims, True, update, xv.dtype)
        idx = arg_index(ctx, xv, d, ext, keepdim and dim is not None, ctx.hint)
        return views.reshape(idx, ctx.shape)

    return rule


def _with_indices(update: Update) -> Callable[..., tuple[View, View]]:
    def rule(ctx: LowerCtx, x: View, dim: int, keepdim: bool = False) -> tuple[View, View]:
        d = dim % max(x.rank, 1)
        dims = [d] if x.rank else []
        (_, v_dtype) = ctx.meta(0)
        values = reduce(ctx.b, f"{ctx.hint}_values", x, dims, keepdim, update, v_dtype)
        ext = values if keepdim or not x.rank else views.unsqueeze(values, d)
        return values, arg_index(ctx, x, d, ext, keepdim, f"{ctx.hint}_indices")

    return rule


lower(aten.argmax.default)(_arg(Update.MAX))
lower(aten.argmin.default)(_arg(Update.MIN))
lower(aten.max.dim)(_with_indices(Update.MAX))
lower(aten.min.dim)(_with_indices(Update.MIN))


def _all_of(update: Update) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: View) -> View:
        return reduce(ctx.b, ctx.hint, x, dims_of(x, None), False, update, ctx.dtype)

    return rule


lower(aten.max.default)(_all_of(Update.MAX))
lower(aten.min.default)(_all_of(Update.MIN))


def _as(dtype: DType, x: View) -> Callable[[Term, Any], Term]:
    return (lambda t, i: t) if x.dtype == dtype else (lambda t, i: cast(dtype, t))


@lower(aten.prod.dim_int)
def _prod(ctx: LowerCtx, x: View, dim: int, keepdim: bool = False, dtype: Any = None) -> View:
    return reduce(
        ctx.b, ctx.hint, x, dims_of(x, dim), keepdim, Update.MUL, ctx.dtype, value=_as(ctx.dtype, x)
    )


@lower(aten.prod.default)
def _prod_all(ctx: LowerCtx, x: View, dtype: Any = None) -> View:
    return reduce(
        ctx.b, ctx.hint, x, dims_of(x, None), False, Update.MUL, ctx.dtype, value=_as(ctx.dtype, x)
    )


# ---- variance: one pass of sum and sum of squares ------------------------------------------------


def moments(
    ctx: LowerCtx, x: View, dims: list[int], keepdim: bool, correction: float, dtype: DType
) -> tuple[View, View]:
    """(mean, var) over `dims` with var = (Σx² - mean·Σx) / (n - correction): per element one add
    (Σx) and one multiply-add (Σx²), both in one pass over x; a centred second pass would count a
    subtraction more per element."""
    b, hint = ctx.b, ctx.hint
    n = math.prod(x.shape[d] for d in dims) if x.rank else 1
    s1 = reduce(b, f"{hint}_sum", x, dims, keepdim, Update.ADD, dtype)
    s2 = reduce(
        b, f"{hint}_sumsq", x, dims, keepdim, Update.ADD, dtype, value=lambda t, i: mul(t, t)
    )
    scale = 1.0 / n if n else math.nan
    mean = elementwise(b, f"{hint}_mean", s1.shape, dtype, [s1], lambda t: mul(t, scale))
    denom = max(0.0, n - correction)
    inv = 1.0 / denom if denom else math.inf
    loops, idx = loop_vars("i", s2.shape)
    centred = call(S.SUB, s2.at(idx), mul(s1.at(idx), mean.at(idx)))
    b.emit(loops, s2.base, idx, Update.ASSIGN, mul(centred, inv))
    return mean, s2


def _correction(correction: Any) -> float:
    return 1.0 if correction is None else float(correction)


@lower(aten.var.correction)
def _var(
    ctx: LowerCtx, x: View, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> View:
    return moments(ctx, x, dims_of(x, dim), keepdim, _correction(correction), ctx.dtype)[1]


@lower(aten.var_mean.correction)
def _var_mean(
    ctx: LowerCtx, x: View, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> tuple[View, View]:
    mean, var = moments(ctx, x, dims_of(x, dim), keepdim, _correction(correction), ctx.meta(0)[1])
    return var, mean


# ---- vector norms: ord -> (update, per-element value, finishing step) ----------------------------

NormRule = tuple[Update, Callable[[Term], Term], Callable[[Term], Term] | None]


def _norm_rule(ord_: float, dtype: DType) -> NormRule:
    table: dict[float, NormRule] = {
        2.0: (Update.ADD, lambda t: mul(t, t), lambda s: call(S.SQRT, s)),
        1.0: (Update.ADD, lambda t: call(S.ABS, t), None),
        math.inf: (Update.MAX, lambda t: call(S.ABS, t), None),
        -math.inf: (Update.MIN, lambda t: call(S.ABS, t), None),
        0.0: (Update.ADD, lambda t: cast(dtype, call(S.NE, t, 0.0)), None),
    }
    if ord_ in table:
        return table[ord_]
    return (
        Update.ADD,
        lambda t: call(S.POW, call(S.ABS, t), ord_),
        lambda s: call(S.POW, s, 1.0 / ord_),
    )


@lower(aten.linalg_vector_norm.default)
def _vector_norm(
    ctx: LowerCtx,
    x: View,
    ord: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> View:
    update, value, finish = _norm_rule(float(ord), ctx.dtype)
    out = reduce(
        ctx.b, ctx.hint, x, dims_of(x, dim), keepdim, update, ctx.dtype, value=lambda t, i: value(t)
    )
    return in_place(ctx, out, finish) if finish else out


# ---- any / all: or / and as max / min over booleans ----------------------------------------------


def _truth(x: View) -> Callable[[Term, Any], Term]:
    return (lambda t, i: t) if x.dtype == DType.BOOL else (lambda t, i: call(S.NE, t, 0))


def _bool_reduce(update: Update) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: View, dim: Any = None, keepdim: bool = False) -> View:
        return reduce(
            ctx.b, ctx.hint, x, dims_of(x, dim), keepdim, update, ctx.dtype, value=_truth(x)
        )

    return rule


lower(aten.any.dim, aten.any.dims, aten.any.default)(_bool_reduce(Update.MAX))
lower(aten.all.dim, aten.all.dims, aten.all.default, aten._is_all_true.default)(_bool_reduce(Update.MIN))

__all__ = ["PRESERVE", "arg_index", "dims_of", "in_place", "moments", "scale_in_place"]
