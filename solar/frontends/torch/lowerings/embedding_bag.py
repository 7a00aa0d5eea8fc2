"""nn.EmbeddingBag (`_embedding_bag`): sums, means or maxima of embedding rows over bags of
indices. Bags given by offsets: element j of the flat indices belongs to bag
bag(j) = #{b >= 1 : offsets[b] <= j}, computed as a scan of the bag starts (one scatter of B marks,
one N-element scan); each row then accumulates into its bag with a data-dependent store
(`out[ind(bag[j]), d] += W[ind(idx[j]), d]`). Fixed-size bags (2-D indices, whose offsets are an
arange: an index map) reduce directly over the bag without the scan or the scatter. Work: one
update per (index, feature), plus the per-bag normalisation of means.

The auxiliary outputs follow PyTorch: offset2bag (mean, max), bag sizes (mean, max; zeros for
sum), and max_indices (the argmax rows for max; bag sizes for mean; zeros for sum). padding_idx
is not supported (entries to skip are data-dependent)."""

from __future__ import annotations

from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import call, cast, const, elementwise, identity, loop_vars, mul, sub
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.indexing import index_values
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.torch.lowerings.scans import scan
from solar.frontends.torch.lowerings.scatter import int_ctx
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.dtypes import DType
from solar.ir.nodes import Cast, Index, Indirect
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

NOTES = {
    aten._embedding_bag.default: "embedding_bag: table rows at the smallest footprint any index data "
    "gives (one row); one update per (index, feature)"
}
MODES = {0: Update.ADD, 1: Update.ADD, 2: Update.MAX}  # sum, mean, max


def _fixed_size(offsets: View) -> int | None:
    """L when offsets[b] = L*b for every b (an arange: fixed-size bags), else None."""
    alts = offsets.at((Affine.make((("_b", 1),)),))
    if len(alts) != 1 or alts[0][0]:
        return None
    e = alts[0][1]
    while isinstance(e, Cast):
        e = e.arg
    if not isinstance(e, Index) or e.expr.const != 0:
        return None
    terms = dict(e.expr.terms)
    if set(terms) != {"_b"}:
        return None
    return terms["_b"]


@lower(aten._embedding_bag.default)
def _embedding_bag(
    ctx: LowerCtx,
    weight: View,
    indices: View,
    offsets: View,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: View | None = None,
    include_last_offset: bool = False,
    padding_idx: int = -1,
) -> tuple[View, View, View, View]:
    if padding_idx is not None and padding_idx >= 0:
        raise SolarError(
            "embedding_bag with padding_idx is not supported (skipped entries are data-dependent)"
        )
    b = ctx.b
    (out_shape, dtype), (o2b_shape, i_dtype), (bs_shape, bs_dtype), (mi_shape, mi_dtype) = (
        ctx.meta(k) for k in range(4)
    )
    n, (bags, dim) = indices.numel, out_shape
    update = MODES[mode]
    idx_flat = views.reshape(indices, (n,))
    row = index_values(ctx, idx_flat)
    psw = per_sample_weights

    def contribution(j: Affine, d: Affine) -> Any:
        value = weight.at((Indirect(row((j,))), d))
        return value if psw is None else mul(value, views.reshape(psw, (n,)).at((j,)))

    out = b.temp(ctx.hint, out_shape, dtype)
    loops, (ib, idim) = loop_vars("i", out_shape)
    size = _fixed_size(offsets)
    # count[b]: the bag's size
    count = b.temp(f"{ctx.hint}_size", (bags,), bs_dtype)
    if size is not None:
        b.emit(loops[:1], count.base, (ib,), Update.ASSIGN, const(size))
        bag = View((n,), i_dtype, lambda idx: (((), Cast(i_dtype, Index(idx[0] // size))),))
        b.emit(
            loops,
            out.base,
            (ib, idim),
            Update.ASSIGN,
            const(identity(update, dtype) if size else 0.0),
        )
        red = [("r0", size)]
        j = ib * size + Affine.make((("r0", 1),))
        b.emit(loops + red, out.base, (ib, idim), update, contribution(j, idim))
    else:
        starts = b.temp(f"{ctx.hint}_starts", (n + 1,), i_dtype)
        sl, (s0,) = loop_vars("i", (n + 1,))
        b.emit(sl, starts.base, (s0,), Update.ASSIGN, const(0))
        ml, (m0,) = loop_vars("i", (bags - 1,))
        start_of = index_values(ctx, offsets)
        b.emit(ml, starts.base, (Indirect(start_of((m0 + 1,))),), Update.ADD, const(1))
        bag = scan(int_ctx(ctx, f"{ctx.hint}_bag", n), views.slice_(starts, 0, 0, n), 0, Update.ADD)
        at_bag = index_values(ctx, bag)
        end = lambda k: views.reshape(offsets, (offsets.numel,)).at((k,))
        bl = loops[:1]
        if include_last_offset:
            b.emit(bl, count.base, (ib,), Update.ASSIGN, cast(bs_dtype, sub(end(ib + 1), end(ib))))
        else:  # the last bag ends at n
            b.emit(
                [("i0", bags - 1)] if bags > 1 else [],
                count.base,
                (ib,),
                Update.ASSIGN,
                cast(bs_dtype, sub(end(ib + 1), end(ib))),
            )
            b.emit(
                [],
                count.base,
                (Affine(const=bags - 1),),
                Update.ASSIGN,
                cast(bs_dtype, sub(const(n), end(Affine(const=bags - 1)))),
            )
        b.emit(loops, out.base, (ib, idim), Update.ASSIGN, const(identity(update, dtype)))
        jl, (j0, d0) = loop_vars("j", (n, dim))
        b.emit(jl, out.base, (Indirect(at_bag((j0,))), d0), update, contribution(j0, d0))
    # empty bags hold 0 (max), means divide by the bag size
    if mode == 1:
        b.emit(
            loops,
            out.base,
            (ib, idim),
            Update.ASSIGN,
            call(S.DIV, out.at((ib, idim)), call(S.MAX, cast(dtype, count.at((ib,))), 1.0)),
        )
    elif mode == 2:
        b.emit(
            loops,
            out.base,
            (ib, idim),
            Update.ASSIGN,
            call(S.WHERE, call(S.EQ, count.at((ib,)), 0), 0.0, out.at((ib, idim))),
        )
    offset2bag = views.constant(0, o2b_shape, i_dtype) if mode == 0 else bag
    bag_size = views.constant(0, bs_shape, bs_dtype) if mode == 0 else count
    if mode == 0:
        max_indices = views.constant(0, mi_shape, mi_dtype)
    elif mode == 1:
        max_indices = (
            count
            if mi_dtype == bs_dtype
            else elementwise(
                b, f"{ctx.hint}_mi", mi_shape, mi_dtype, [count], lambda t: cast(mi_dtype, t)
            )
        )
    else:
        max_indices = _argmax_rows(ctx, out, count, bag, row, weight, n, mi_shape, mi_dtype)
    return out, offset2bag, bag_size, max_indices


def _argmax_rows(
    ctx: LowerCtx,
    out: View,
    count: View,
    bag: View,
    row: Any,
    weight: View,
    n: int,
    shape: Any,
    dtype: DType,
) -> View:
    """The row index of each bag's maximum per feature (the smallest such row), 0 for empty bags."""
    b = ctx.b
    mi = b.temp(f"{ctx.hint}_argmax", shape, dtype)
    loops, (ib, idim) = loop_vars("i", shape)
    big = identity(Update.MIN, dtype)
    b.emit(loops, mi.base, (ib, idim), Update.ASSIGN, const(big))
    at_bag = index_values(ctx, bag)
    jl, (j0, d0) = loop_vars("j", (n, shape[1]))
    where = Indirect(at_bag((j0,)))
    r = row((j0,))
    hit = call(S.EQ, weight.at((Indirect(r), d0)), out.at((where, d0)))
    b.emit(jl, mi.base, (where, d0), Update.MIN, call(S.WHERE, hit, cast(dtype, (((), r),)), big))
    b.emit(
        loops,
        mi.base,
        (ib, idim),
        Update.ASSIGN,
        call(S.WHERE, call(S.EQ, count.at((ib,)), 0), 0, mi.at((ib, idim))),
    )
    return mi


__all__ = ["MODES"]
