"""Order statistics: sort (and argsort, msort, which export as sort), topk and kthvalue.

Each becomes one IR order statement per op (`pos[.., j, ..] = order(x[.., r, ..], r, j)`, the
position along `r` of the key of rank `j`) and a data-dependent read of the values at those
positions (`x[.., ind(pos[.., j, ..]), ..]`, a view: nothing is copied), built by the builder the
JAX frontend shares (solar/frontends/order.py). The order statement computes nothing: it is
priced at its bytes only (the keys read, the positions written). No work term is charged because
none is provable for every implementation: the comparison lower bounds (n - 1 comparisons for a
maximum, log2(n!) for a sort) hold only for comparison-based algorithms, and GPU sorts and top-k
selections are radix-based (docs/BOUNDS.md, order statistics).

Ties go to the lower position first (a stable order) and NaN is greatest, as PyTorch orders; where
PyTorch leaves the order of ties unspecified (topk, sort without stable=True) the IR's order is one
of the orders it allows."""

from __future__ import annotations

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.order import order
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View

aten = torch.ops.aten

NOTES = {
    op: "order statistics (sort, topk, kthvalue): priced at their bytes only (keys read, "
    "positions and values written); no comparison count is charged, since radix sorts and "
    "selections compare nothing"
    for op in (aten.sort.default, aten.sort.stable, aten.topk.default, aten.kthvalue.default)
}


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
    return order(ctx.b, ctx.hint, x, dim=dim, count=int(k), descending=bool(largest))


@lower(aten.sort.default)
def _sort(ctx: LowerCtx, x: View, dim: int = -1, descending: bool = False) -> tuple[View, View]:
    n = x.shape[dim % x.rank] if x.rank else 1
    return order(ctx.b, ctx.hint, x, dim=dim, count=n, descending=bool(descending))


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
    values, pos = order(ctx.b, ctx.hint, x, dim=dim, count=1, first=int(k) - 1)
    if keepdim or x.rank == 0:
        return values, pos
    d = dim % x.rank
    return views.squeeze(values, [d]), views.squeeze(pos, [d])


__all__ = ["CHECK_REFERENCES", "NOTES"]
