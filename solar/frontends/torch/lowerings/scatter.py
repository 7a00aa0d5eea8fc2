"""Data-dependent stores: scatter (src and value), scatter_add, scatter_reduce (sum, prod, mean,
amax, amin; with or without self), index_put (advanced-indexing assignment and accumulation:
`x[idx] = v`, `x[:, idx] += v`, index_add / index_copy / F.fold after decomposition), index_add,
index_copy and index_fill, plus a boolean-mask assignment `x[mask] = scalar` (a select).

Each copies `self` into the output (out-of-place, as the exported program is functional) and then
writes at positions read from the index tensor: an IR store with an `Indirect` term
(`out[ind(index[i, j]), j] += src[i, j]`), run by the interpreter and checked like any other.
Several points may hit one element: accumulating updates combine them all; an assignment keeps
one of them (PyTorch leaves the choice undefined). Counting: one update per index element; the
bytes of the written elements are the smallest footprint any index data gives (one element per
indirect dim, docs/BOUNDS.md), inside the output's full copy. Index values must be in range
(negative indices are not wrapped; the interpreter reports them)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import Term, call, cast, const, elementwise, identity, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.indexing import materialise, index_values
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.torch.lowerings.scans import scan
from solar.frontends.views import View
from solar.ir.affine import Affine, var
from solar.ir.nodes import Call, Const, Indirect
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

Index = tuple[Affine, ...]
StoreIndex = Callable[[Index], tuple[Affine | Indirect, ...]]

NOTES = {
    op: "data-dependent stores (scatter, index_put): one update per index element; the elements "
    "written count at the smallest footprint any index data gives (one per indirect dim)"
    for op in (
        aten.scatter.src,
        aten.scatter.value,
        aten.scatter_add.default,
        aten.scatter.reduce,
        aten.scatter.value_reduce,
        aten.scatter_reduce.two,
        aten.index_put.default,
        aten.index_add.default,
        aten.index_copy.default,
        aten.index_fill.int_Scalar,
        aten.masked_scatter.default,
    )
}
REDUCE = {
    "sum": Update.ADD,
    "add": Update.ADD,
    "mean": Update.ADD,
    "prod": Update.MUL,
    "multiply": Update.MUL,
    "amax": Update.MAX,
    "amin": Update.MIN,
}


def _copy(ctx: LowerCtx, x: View) -> View:
    """The output, holding a copy of `x`."""
    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, [x], lambda t: cast(ctx.dtype, t))


def _scatter_into(
    ctx: LowerCtx,
    out: View,
    shape: Sequence[int],
    where: StoreIndex,
    value: Callable[[Index], Term],
    update: Update,
) -> None:
    """for i in shape: out[where(i)] (update)= value(i)."""
    loops, idx = loop_vars("s", shape)
    ctx.b.emit(loops, out.base, where(idx), update, cast(out.dtype, value(idx)))


def _along(ctx: LowerCtx, dim: int, index: View) -> StoreIndex:
    """The store index of scatter along `dim`: index[i] there, i elsewhere."""
    at = index_values(ctx, index)
    return lambda idx: idx[:dim] + (Indirect(at(idx)),) + idx[dim + 1 :]


def _src(v: View | Any) -> Callable[[Index], Term]:
    if isinstance(v, View):
        return lambda idx: v.at(idx)
    return lambda idx: const(v)


def _scatter(ctx: LowerCtx, x: View, dim: int, index: View, src: Any, update: Update) -> View:
    d = dim % max(x.rank, 1)
    out = _copy(ctx, x)
    _scatter_into(ctx, out, index.shape, _along(ctx, d, index), _src(src), update)
    return out


@lower(aten.scatter.src, aten.scatter.value)
def _scatter_assign(ctx: LowerCtx, x: View, dim: int, index: View, src: Any) -> View:
    return _scatter(ctx, x, dim, index, src, Update.ASSIGN)


@lower(aten.scatter_add.default)
def _scatter_add(ctx: LowerCtx, x: View, dim: int, index: View, src: View) -> View:
    return _scatter(ctx, x, dim, index, src, Update.ADD)


@lower(aten.scatter.reduce, aten.scatter.value_reduce)
def _scatter_reduce_legacy(
    ctx: LowerCtx, x: View, dim: int, index: View, src: Any, *, reduce: str
) -> View:
    if reduce not in ("add", "multiply"):
        raise SolarError(f"scatter with reduce={reduce!r}: PyTorch accepts 'add' or 'multiply'")
    return _scatter(ctx, x, dim, index, src, REDUCE[reduce])


@lower(aten.scatter_reduce.two)
def _scatter_reduce(
    ctx: LowerCtx,
    x: View,
    dim: int,
    index: View,
    src: View,
    reduce: str,
    *,
    include_self: bool = True,
) -> View:
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise SolarError(
            f"scatter_reduce with reduce={reduce!r}: use sum, prod, mean, amax or amin"
        )
    if reduce == "mean" and not ctx.dtype.is_float:
        raise SolarError("scatter_reduce(reduce='mean') of integer tensors is not supported")
    d = dim % max(x.rank, 1)
    update = REDUCE[reduce]
    where = _along(ctx, d, index)
    out = _copy(ctx, x)
    if not include_self:  # the elements written start from the reduction's identity
        _scatter_into(
            ctx,
            out,
            index.shape,
            where,
            lambda i: const(identity(update, ctx.dtype)),
            Update.ASSIGN,
        )
    _scatter_into(ctx, out, index.shape, where, _src(src), update)
    if reduce == "mean":  # divide by the number of values combined (untouched elements: 1)
        count = ctx.b.temp(f"{ctx.hint}_count", ctx.shape, ctx.dtype)
        loops, idx = loop_vars("i", ctx.shape)
        ctx.b.emit(loops, count.base, idx, Update.ASSIGN, const(1.0 if include_self else 0.0))
        _scatter_into(ctx, count, index.shape, where, lambda i: const(1.0), Update.ADD)
        ctx.b.emit(
            loops,
            out.base,
            idx,
            Update.ASSIGN,
            call(S.DIV, out.at(idx), call(S.MAX, count.at(idx), 1.0)),
        )
    return out


def _advanced(
    ctx: LowerCtx, x: View, indices: Sequence[View | None]
) -> tuple[tuple[int, ...], StoreIndex]:
    """x[indices] as numpy advanced indexing: the shape of the indexed result, and for each of
    its positions the element of x (index tensors broadcast together; their dims replace the
    indexed dims in place when those are adjacent, else they come first)."""
    indices = list(indices) + [None] * (x.rank - len(indices))
    pos = [k for k, t in enumerate(indices) if t is not None]
    bshape = views.broadcast_shape(*(indices[k].shape for k in pos))
    values = {k: index_values(ctx, views.expand(indices[k], bshape)) for k in pos}
    rest = [k for k in range(x.rank) if indices[k] is None]
    first = pos[0] if pos == list(range(pos[0], pos[-1] + 1)) else 0
    nb = len(bshape)
    shape = [x.shape[k] for k in rest]
    shape[first:first] = bshape

    def where(idx: Index) -> tuple[Affine | Indirect, ...]:
        b_idx = idx[first : first + nb]
        others = dict(zip(rest, idx[:first] + idx[first + nb :]))
        return tuple(
            Indirect(values[k](b_idx)) if k in values else others[k] for k in range(x.rank)
        )

    return tuple(shape), where


@lower(aten.index_put.default)
def _index_put(
    ctx: LowerCtx, x: View, indices: Sequence[View | None], values: View, accumulate: bool = False
) -> View:
    given = [t for t in indices if t is not None]
    if any(t.dtype.kind == "bool" for t in given):
        return _masked_put(ctx, x, indices, values, accumulate)
    shape, where = _advanced(ctx, x, indices)
    out = _copy(ctx, x)
    src = views.expand(values, shape)
    _scatter_into(
        ctx, out, shape, where, lambda i: src.at(i), Update.ADD if accumulate else Update.ASSIGN
    )
    return out


def _masked_put(
    ctx: LowerCtx, x: View, indices: Sequence[View | None], values: View, accumulate: bool
) -> View:
    """x[mask] = v with one boolean mask over x's leading dims and a single value: a select (the
    general form has a data-dependent number of values). Values with no element (the rows of a
    data-dependent size at the least the bound takes, 0) leave x as it is: torch requires the
    mask to select nothing then."""
    if len(indices) == 1 and values.numel == 0:
        return x
    if len(indices) != 1 or values.numel != 1:
        raise SolarError(
            "index_put with a boolean mask is supported for `x[mask] = scalar` only (one mask, one "
            "value); other forms take as many values as the mask has true elements"
        )
    mask = indices[0]
    m = views.expand(views.reshape(mask, mask.shape + (1,) * (x.rank - mask.rank)), x.shape)
    v = views.reshape(values, ())

    def fn(xt: Term, mt: Term, vt: Term) -> Term:
        new = call(S.ADD, xt, vt) if accumulate else vt
        return call(S.WHERE, mt, cast(ctx.dtype, new), xt)

    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, [x, m, v], fn)


def _index_dim(
    ctx: LowerCtx, x: View, dim: int, index: View, src: Any, update: Update, alpha: Any = 1
) -> View:
    """index_add / index_copy / index_fill: out[..., index[k], ...] (update)= src[..., k, ...]."""
    d = dim % max(x.rank, 1)
    flat = views.reshape(index, (index.numel,))
    at = index_values(ctx, flat)
    shape = x.shape[:d] + (index.numel,) + x.shape[d + 1 :]
    out = _copy(ctx, x)
    source = _src(src)

    def value(i: Index) -> Term:
        return source(i) if alpha == 1 else mul(source(i), alpha)

    def where(idx: Index) -> tuple[Affine | Indirect, ...]:
        return idx[:d] + (Indirect(at(idx[d : d + 1])),) + idx[d + 1 :]

    _scatter_into(ctx, out, shape, where, value, update)
    return out


@lower(aten.masked_scatter.default)
def _masked_scatter(ctx: LowerCtx, x: View, mask: View, source: View) -> View:
    """The k-th true element of the mask (row-major) takes source element k: its position is a
    scan of the mask (count[j] = trues up to j), read as a data-dependent index."""
    n, s = math.prod(ctx.shape), source.numel
    m = views.reshape(views.expand(mask, ctx.shape), (n,))
    count = scan(int_ctx(ctx, f"{ctx.hint}_count", n), m, 0, Update.ADD)
    at = index_values(ctx, count)

    def shifted_read(flat: View) -> View | None:
        shifted = View((s + 1,), flat.dtype, lambda idx: flat.at((idx[0] - 1,)))  # [k] = flat[k-1]
        return views.indirect(shifted, (n,), lambda idx: (Call(S.MAX, (at(idx), Const(1))),))

    flat = views.reshape(source, (s,))
    read = shifted_read(flat) or shifted_read(materialise(ctx, flat, "source"))
    assert read is not None  # a materialised tensor is indexed directly
    out = elementwise(
        ctx.b,
        ctx.hint,
        (n,),
        ctx.dtype,
        [m, read, views.reshape(x, (n,))],
        lambda mt, rt, xt: call(S.WHERE, mt, cast(ctx.dtype, rt), xt),
    )
    return views.reshape(out, ctx.shape)


@lower(aten.masked_scatter_backward.default)
def _masked_scatter_backward(ctx: LowerCtx, grad: View, mask: View, sizes: Sequence[int]) -> View:
    """The source's gradient of masked_scatter: the k-th true element of the mask (row-major)
    gives its gradient to source element k, the elements past the mask's count get 0. Each
    element of the gradient is added at its position in the scan of the mask (count[j] - 1; a
    false element adds 0 there)."""
    n, s = math.prod(grad.shape), math.prod(ctx.shape)
    m = views.reshape(views.expand(mask, grad.shape), (n,))
    count = scan(int_ctx(ctx, f"{ctx.hint}_count", n), m, 0, Update.ADD)
    at = index_values(ctx, count)
    flat = views.reshape(grad, (n,))
    out = ctx.b.temp(ctx.hint, (s,), ctx.dtype)
    ctx.b.emit([("i0", s)], out.base, (var("i0"),), Update.ASSIGN, const(0.0))
    _scatter_into(
        ctx, out, (n,), lambda idx: (Indirect(Call(S.MAX, (Call(S.SUB, (at(idx), Const(1))), Const(0)))),),
        lambda idx: call(S.WHERE, m.at(idx), cast(ctx.dtype, flat.at(idx)), const(0.0)), Update.ADD,
    )
    return views.reshape(out, ctx.shape)


def int_ctx(ctx: LowerCtx, name: str, n: int) -> LowerCtx:
    """A context for a helper rule whose output is an int64 vector of n elements (metadata only)."""
    val = torch.empty((n,), dtype=torch.int64, device="meta")
    return replace(ctx, node=SimpleNamespace(name=name, meta={"val": val}))


@lower(aten.index_add.default)
def _index_add(
    ctx: LowerCtx, x: View, dim: int, index: View, source: View, *, alpha: Any = 1
) -> View:
    return _index_dim(ctx, x, dim, index, source, Update.ADD, alpha)


@lower(aten.index_copy.default)
def _index_copy(ctx: LowerCtx, x: View, dim: int, index: View, source: View) -> View:
    return _index_dim(ctx, x, dim, index, source, Update.ASSIGN)


@lower(aten.index_fill.int_Scalar)
def _index_fill(ctx: LowerCtx, x: View, dim: int, index: View, value: Any) -> View:
    return _index_dim(ctx, x, dim, index, value, Update.ASSIGN)


__all__ = ["REDUCE"]


# ---- affine stores: a slice or a selected index of a copy ----------------------------------------


def _store_region(
    ctx: LowerCtx, x: View, src: View, where: Callable[[Index], tuple[Affine, ...]]
) -> View:
    """The output is a copy of `x` whose elements at `where(i)` (i over src's shape) are src[i]:
    slice_scatter / select_scatter, which in-place slice updates (`x[:, :k].mul_(2)`) become."""
    out = _copy(ctx, x)
    _scatter_into(ctx, out, src.shape, where, lambda i: src.at(i), Update.ASSIGN)
    return out


@lower(aten.slice_scatter.default)
def _slice_scatter(
    ctx: LowerCtx,
    x: View,
    src: View,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> View:
    d = dim % max(x.rank, 1)
    first, _, _ = slice(start, end, step).indices(x.shape[d])

    def where(i: Index) -> tuple[Affine, ...]:
        return i[:d] + (i[d] * step + first,) + i[d + 1 :]

    return _store_region(ctx, x, src, where)


@lower(aten.select_scatter.default)
def _select_scatter(ctx: LowerCtx, x: View, src: View, dim: int, index: int) -> View:
    d = dim % max(x.rank, 1)
    at = index % x.shape[d]
    return _store_region(ctx, x, src, lambda i: i[:d] + (Affine((), at),) + i[d:])
