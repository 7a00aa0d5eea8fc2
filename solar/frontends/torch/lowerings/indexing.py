"""Data-dependent indexing as views: embedding, gather, index_select and advanced indexing
(index.Tensor) read their source at positions given by an index tensor, as indirect index terms
(`W[ind(idx[i]), d]`). No statement is emitted: consumers read the source directly, and the bytes of
the source are its indirect footprint (one element per indirect dimension, a lower bound: the index
data could all be equal). Index values must lie in range (negative indices are not wrapped; the
interpreter reports them as out of bounds).

Scatter-type ops (scatter, scatter_add, index_put) are data-dependent stores: scatter.py."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import elementwise
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.datasized import mask_index
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import SourceIndex, View
from solar.ir.affine import Affine, var
from solar.ir.nodes import Expr

aten = torch.ops.aten

Index = tuple[Affine, ...]

NOTES = {
    op: "data-dependent reads (embedding, gather, advanced indexing): bytes of the source at the "
    "smallest footprint any index data gives (one element per indirect dim)"
    for op in (aten.embedding.default, aten.gather.default, aten.index_select.default, aten.index.Tensor)
}


def materialise(ctx: LowerCtx, v: View, hint: str) -> View:
    """`v` copied into a temp (a view whose index map an indirect access cannot go through)."""
    return elementwise(ctx.b, f"{ctx.hint}_{hint}", v.shape, v.dtype, [v], lambda t: t)


def _simple(v: View) -> bool:
    """True when every element of `v` is one unguarded expression (no pieces)."""
    alts = v.at(tuple(var(f"_probe{k}") for k in range(v.rank)))
    return len(alts) == 1 and not alts[0][0]


def index_values(ctx: LowerCtx, index: View) -> Callable[[Index], Expr]:
    """The expression of an index tensor's element (materialised first if it is piecewise)."""
    if index.dtype.kind != "int":
        raise SolarError(
            f"indexing with a {index.dtype.text} tensor is not supported (integer indices only)"
        )
    if not _simple(index):
        index = materialise(ctx, index, "index")
    return lambda idx: index.at(tuple(idx))[0][1]


def take(ctx: LowerCtx, source: View, fn: Callable[[Index], SourceIndex]) -> View:
    out = views.indirect(source, ctx.shape, fn)
    if out is None:
        out = views.indirect(materialise(ctx, source, "source"), ctx.shape, fn)
    assert out is not None  # a materialised tensor is indexed directly
    return out


@lower(aten.embedding.default)
def _embedding(
    ctx: LowerCtx,
    weight: View,
    indices: View,
    padding_idx: int = -1,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> View:
    at = index_values(ctx, indices)
    n = indices.rank
    return take(ctx, weight, lambda idx: (at(idx[:n]), idx[n]))


@lower(aten.gather.default)
def _gather(ctx: LowerCtx, x: View, dim: int, index: View, sparse_grad: bool = False) -> View:
    d = dim % max(x.rank, 1)
    at = index_values(ctx, index)
    return take(ctx, x, lambda idx: idx[:d] + (at(idx),) + idx[d + 1 :])


@lower(aten.index_select.default)
def _index_select(ctx: LowerCtx, x: View, dim: int, index: View) -> View:
    d = dim % max(x.rank, 1)
    at = index_values(ctx, views.reshape(index, (index.numel,)))
    return take(ctx, x, lambda idx: idx[:d] + (at(idx[d : d + 1]),) + idx[d + 1 :])


@lower(aten.index.Tensor)
def _index(ctx: LowerCtx, x: View, indices: Sequence[View | None]) -> View:
    """numpy advanced indexing: index tensors broadcast together; their dims replace the indexed
    dims in place when the indexed dims are adjacent, else they come first."""
    indices = list(indices) + [None] * (x.rank - len(indices))
    pos = [k for k, t in enumerate(indices) if t is not None]
    masks = [indices[k] for k in pos if indices[k].dtype.kind == "bool"]
    if masks:
        return mask_index(ctx, x, masks)
    bshape = views.broadcast_shape(*(indices[k].shape for k in pos))
    values = {k: index_values(ctx, views.expand(indices[k], bshape)) for k in pos}
    rest = [k for k in range(x.rank) if indices[k] is None]
    first = pos[0] if pos == list(range(pos[0], pos[-1] + 1)) else 0
    nb = len(bshape)

    def fn(idx: Index) -> tuple[Any, ...]:
        b_idx = idx[first : first + nb]
        others = dict(zip(rest, idx[:first] + idx[first + nb :]))
        return tuple(values[k](b_idx) if k in values else others[k] for k in range(x.rank))

    return take(ctx, x, fn)


__all__: list[str] = []
