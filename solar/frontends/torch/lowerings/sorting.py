"""Order statistics: sort (and argsort, msort, which export as sort), topk and kthvalue.

Each becomes one IR order statement per op (`pos[.., j, ..] = order(x[.., r, ..], r, j)`, the
position along `r` of the key of rank `j`) and a data-dependent read of the values at those
positions (`x[.., ind(pos[.., j, ..]), ..]`, a view: nothing is copied). The order statement
computes nothing: it is priced at its bytes only (the keys read, the positions written). No work
term is charged because none is provable for every implementation: the comparison lower bounds
(n - 1 comparisons for a maximum, log2(n!) for a sort) hold only for comparison-based algorithms,
and GPU sorts and top-k selections are radix-based (docs/BOUNDS.md, order statistics).

Ties go to the lower position first (a stable order) and NaN is greatest, as PyTorch orders; where
PyTorch leaves the order of ties unspecified (topk, sort without stable=True) the IR's order is one
of the orders it allows."""

from __future__ import annotations

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import const, elementwise, loop_vars
from solar.frontends.torch.convert import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Cast, Load, Order
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

NOTES = {
    op: "order statistics (sort, topk, kthvalue): priced at their bytes only (keys read, "
    "positions and values written); no comparison count is charged, since radix sorts and "
    "selections compare nothing"
    for op in (aten.sort.default, aten.sort.stable, aten.topk.default, aten.kthvalue.default)
}


def _plain(v: View) -> bool:
    """Every element of `v` is one unguarded load (under casts) with affine indices."""
    alts = v.at(tuple(var(f"_probe{k}") for k in range(v.rank)))
    if len(alts) != 1 or alts[0][0]:
        return False
    expr = alts[0][1]
    while isinstance(expr, Cast):
        expr = expr.arg
    return isinstance(expr, Load) and all(isinstance(t, Affine) for t in expr.index)


def plain_keys(ctx: LowerCtx, x: View) -> View:
    """`x` as something an order statistic can read: itself, or a copy when it is computed or
    pieced together (an order's key computes nothing)."""
    if _plain(x):
        return x
    return elementwise(ctx.b, f"{ctx.hint}_keys", x.shape, x.dtype, [x], lambda t: t)


def order(
    ctx: LowerCtx, x: View, dim: int, count: int, first: int, descending: bool
) -> tuple[View, View]:
    """(values, positions) of the keys of ranks first .. first+count-1 along `dim` of `x`, in
    rank order; both have `x`'s shape with `dim` of size `count`."""
    if x.rank == 0:
        x = views.unsqueeze(x, 0)
        values, positions = order(ctx, x, 0, count, first, descending)
        return views.squeeze(values, [0]), views.squeeze(positions, [0])
    d = dim % x.rank
    n = x.shape[d]
    shape = (*x.shape[:d], count, *x.shape[d + 1 :])
    x = plain_keys(ctx, x)
    probe = lambda i: (*i[:d], Load("_probe", tuple(i)), *i[d + 1 :])  # noqa: E731
    if views.indirect(x, shape, probe) is None:  # a reshape: the position would index non-linearly
        x = elementwise(ctx.b, f"{ctx.hint}_keys", x.shape, x.dtype, [x], lambda t: t)
    pos = ctx.b.temp(f"{ctx.hint}_pos", shape, DType.I64)
    loops, idx = loop_vars("i", shape)
    if n == 1:  # one key: its position is 0
        ctx.b.emit(loops, pos.base, idx, Update.ASSIGN, const(0))
    elif count > 0:
        key = x.at((*idx[:d], var("r"), *idx[d + 1 :]))[0][1]
        rank = idx[d] + first if count > 1 else Affine(const=first)
        value = (((), Order(key, "r", rank, descending)),)
        ctx.b.emit([*loops, ("r", n)], pos.base, idx, Update.ASSIGN, value)
    at = lambda i: pos.at(tuple(i))[0][1]  # noqa: E731
    values = views.indirect(x, shape, lambda i: (*i[:d], at(i), *i[d + 1 :]))
    assert values is not None  # x is plain: its loads take an indirect index directly
    return values, pos


def _stable_topk(x: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    values, indices = torch.sort(x, dim=dim, descending=largest, stable=True)
    return values.narrow(dim, 0, k), indices.narrow(dim, 0, k)


def _stable_kthvalue(x: torch.Tensor, k: int, dim: int = -1, keepdim: bool = False):
    values, indices = torch.sort(x, dim=dim, stable=True)
    values, indices = values.narrow(dim, k - 1, 1), indices.narrow(dim, k - 1, 1)
    return (values, indices) if keepdim else (values.squeeze(dim), indices.squeeze(dim))


# What `solar verify` compares an op with on random data (which has ties): PyTorch's own op with
# the tie order the IR defines (stable), which PyTorch's contract allows for these ops.
CHECK_REFERENCES = {
    aten.sort.default: lambda x, dim=-1, descending=False: torch.sort(
        x, dim=dim, descending=descending, stable=True
    ),
    aten.topk.default: _stable_topk,
    aten.kthvalue.default: _stable_kthvalue,
}


@lower(aten.topk.default)
def _topk(
    ctx: LowerCtx, x: View, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[View, View]:
    # sorted=False: PyTorch returns the k keys in an unspecified order; rank order is one of them
    return order(ctx, x, dim, int(k), 0, bool(largest))


@lower(aten.sort.default)
def _sort(ctx: LowerCtx, x: View, dim: int = -1, descending: bool = False) -> tuple[View, View]:
    n = x.shape[dim % x.rank] if x.rank else 1
    return order(ctx, x, dim, n, 0, bool(descending))


@lower(aten.sort.stable)
def _sort_stable(
    ctx: LowerCtx, x: View, *, stable: bool | None = None, dim: int = -1, descending: bool = False
) -> tuple[View, View]:
    return _sort(ctx, x, dim, descending)


@lower(aten.kthvalue.default)
def _kthvalue(
    ctx: LowerCtx, x: View, k: int, dim: int = -1, keepdim: bool = False
) -> tuple[View, View]:
    n = x.shape[dim % x.rank] if x.rank else 1
    if not 1 <= k <= n:
        raise SolarError(f"kthvalue: k={k} is outside 1..{n}")
    values, pos = order(ctx, x, dim, 1, int(k) - 1, False)
    if keepdim or x.rank == 0:
        return values, pos
    d = dim % x.rank
    return views.squeeze(values, [d]), views.squeeze(pos, [d])


__all__: list[str] = ["order", "plain_keys"]
