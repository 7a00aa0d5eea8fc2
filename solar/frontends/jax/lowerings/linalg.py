"""Contractions: dot_general (any batch and contracting dimensions) and conv_general_dilated (any
dimension numbers, strides, padding, lhs/rhs dilation, feature groups). Each is one init statement
and one pure two-operand `+=` product statement, so tensor cores are priced; an algorithm preset
that rounds operands (BF16_BF16_F32, ...) states the rounding as casts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from solar.errors import SolarError
from solar.frontends.builder import Term, cast, contract, loop_vars, mul
from solar.frontends.jax import precision as prec
from solar.frontends.jax.context import LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.frontends.jax.primitives import P
from solar.frontends.views import View
from solar.ir.affine import Affine, Constraint, ge, lt
from solar.ir.scalar_ops import Update

Idx = tuple[Affine, ...]


def _operand(x: View, precision: Any) -> Callable[[Idx], Term]:
    """x's term at an index, rounded to the precision preset's operand dtype when it is narrower."""
    narrow = prec.operand_dtype(precision)
    if narrow is None or narrow.bits >= x.dtype.bits:
        return x.at
    return lambda idx: cast(narrow, x.at(idx))


@lower(P.dot_general_p)
def _dot_general(
    ctx: LowerCtx, lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any = None, **_: Any
) -> View:
    """out[batch, lhs free, rhs free] = Σ over the contracting dims of lhs * rhs."""
    lhs, rhs = as_view(lhs), as_view(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lfree = [d for d in range(lhs.rank) if d not in lc and d not in lb]
    rfree = [d for d in range(rhs.rank) if d not in rc and d not in rb]
    a_at, c_at = _operand(lhs, precision), _operand(rhs, precision)
    nb, nl = len(lb), len(lfree)

    def index(rank: int, pairs: list[tuple[Sequence[int], Sequence[Affine]]]) -> Idx:
        out: list[Affine] = [Affine()] * rank
        for dims, values in pairs:
            for d, v in zip(dims, values):
                out[d] = v
        return tuple(out)

    def a(o: Idx, r: Idx) -> Term:
        return a_at(index(lhs.rank, [(lb, o[:nb]), (lfree, o[nb : nb + nl]), (lc, r)]))

    def c(o: Idx, r: Idx) -> Term:
        return c_at(index(rhs.rank, [(rb, o[:nb]), (rfree, o[nb + nl :]), (rc, r)]))

    if not lc:  # no reduction: an outer product is one multiply per element, no accumulation
        loops, o = loop_vars("i", ctx.shape)
        out = ctx.b.temp(ctx.hint, ctx.shape, ctx.dtype)
        ctx.b.emit(loops, out.base, o, Update.ASSIGN, mul(a(o, ()), c(o, ())))
        return out
    extents = [lhs.shape[d] for d in lc]
    return contract(ctx.b, ctx.hint, ctx.shape, ctx.dtype, extents, a, c)


@lower(P.conv_general_dilated_p)
def _conv(
    ctx: LowerCtx,
    lhs: Any,
    rhs: Any,
    *,
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int],
    rhs_dilation: Sequence[int],
    dimension_numbers: Any,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any = None,
    **_: Any,
) -> View:
    """out[n, f, y] = Σ_{c, k} lhs[n, g(f)*Cin_g + c, (y*s + k*rd - lo) / ld] * rhs[f, c, k]: the
    lhs position is in the lhs-dilated, padded input, and only positions on a real element count
    (guards); g(f) = f // Cout_g picks the feature group."""
    if batch_group_count != 1:
        raise SolarError(
            f"conv_general_dilated with batch_group_count={batch_group_count} is not supported yet"
        )
    lhs, rhs = as_view(lhs), as_view(rhs)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(window_strides)
    groups = feature_group_count
    cin_g = rhs.shape[rhs_spec[1]]
    cout_g = rhs.shape[rhs_spec[0]] // groups
    kernel = [rhs.shape[rhs_spec[2 + d]] for d in range(nd)]
    spatial = [lhs.shape[lhs_spec[2 + d]] for d in range(nd)]
    a_at, c_at = _operand(lhs, precision), _operand(rhs, precision)

    def position(o: Idx, r: Idx, d: int) -> tuple[Affine, list[Constraint]]:
        p = o[out_spec[2 + d]] * window_strides[d] + r[1 + d] * rhs_dilation[d] - padding[d][0]
        ld = lhs_dilation[d]
        guards = [ge(p, 0), lt(p, (spatial[d] - 1) * ld + 1)]
        if ld > 1:
            guards.append(Constraint(p % ld, equality=True))
        return p // ld, guards

    def a(o: Idx, r: Idx) -> Term:
        idx: list[Affine] = [Affine()] * lhs.rank
        idx[lhs_spec[0]] = o[out_spec[0]]
        idx[lhs_spec[1]] = (o[out_spec[1]] // cout_g) * cin_g + r[0]
        for d in range(nd):
            idx[lhs_spec[2 + d]] = position(o, r, d)[0]
        return a_at(tuple(idx))

    def c(o: Idx, r: Idx) -> Term:
        idx: list[Affine] = [Affine()] * rhs.rank
        idx[rhs_spec[0]] = o[out_spec[1]]
        idx[rhs_spec[1]] = r[0]
        for d in range(nd):
            idx[rhs_spec[2 + d]] = r[1 + d]
        return c_at(tuple(idx))

    def guards(o: Idx, r: Idx) -> list[Constraint]:
        return [g for d in range(nd) for g in position(o, r, d)[1]]

    return contract(ctx.b, ctx.hint, ctx.shape, ctx.dtype, (cin_g, *kernel), a, c, guards=guards)
