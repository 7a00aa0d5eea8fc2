"""F.interpolate's kept forms: nearest and nearest-exact (1-3 dims) as index maps (no statements),
and linear / bilinear / trilinear as a chain of lerps over the two source neighbours of each
output coordinate, `a + w*(b - a)` per interpolated dim (3 FLOPs each: what the cheapest kernel
does). Bicubic is decomposed by torch.export into gathers and arithmetic.

Source coordinates are exact rationals: the scale is in/out (or 1/scale_factor when one is given,
as PyTorch does), and PyTorch's `src = scale*(i + 1/2) - 1/2` (clamped at 0; align_corners:
`(in-1)/(out-1) * i`) becomes floor-divisions and moduli of affine index expressions, so the
neighbours are affine reads and the boundary cases are guarded pieces. The weight of each output
position along a dim is one small temp per dim (as many elements as that output dim)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import torch

from solar.frontends.builder import Term, add, cast, index_value, loop_vars, mul, sub
from solar.frontends.torch.convert import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, Constraint, ge, lt
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

Index = tuple[Affine, ...]

NEAREST = {
    aten.upsample_nearest1d.vec: False,
    aten.upsample_nearest2d.vec: False,
    aten.upsample_nearest3d.vec: False,
    aten._upsample_nearest_exact1d.vec: True,
    aten._upsample_nearest_exact2d.vec: True,
    aten._upsample_nearest_exact3d.vec: True,
}
LINEAR = (aten.upsample_linear1d.vec, aten.upsample_bilinear2d.vec, aten.upsample_trilinear3d.vec)


def _scale(n_in: int, n_out: int, factor: float | None, align_corners: bool = False) -> Fraction:
    """PyTorch's source/destination scale as an exact rational."""
    if align_corners:
        return Fraction(n_in - 1, n_out - 1) if n_out > 1 else Fraction(0)
    if factor is not None and factor > 0:
        return Fraction(1.0 / factor).limit_denominator(1 << 16)
    return Fraction(n_in, n_out)


def _factors(scale_factors: Sequence[float] | None, n: int) -> list[float | None]:
    return list(scale_factors) if scale_factors else [None] * n


def _nearest_rule(exact: bool):
    def rule(ctx: LowerCtx, x: View, output_size: Any = None, scale_factors: Any = None) -> View:
        shape = tuple(ctx.shape)
        k = len(shape) - 2
        fs = _factors(scale_factors, k)
        maps = []
        for d in range(k):
            n_in, n_out = x.shape[2 + d], shape[2 + d]
            s = _scale(n_in, n_out, fs[d])
            p, q = s.numerator, s.denominator
            # nearest: floor(i*s); nearest-exact: floor((i + 1/2)*s); both clamped to n_in - 1
            maps.append((n_in, p, q, exact))

        def at(idx: Index) -> Any:
            src = list(idx[:2])
            for d, (n_in, p, q, ex) in enumerate(maps):
                i = idx[2 + d]
                src.append(((2 * i + 1) * p) // (2 * q) if ex else (i * p) // q)
            return x.at(tuple(src))

        return View(shape, x.dtype, at)

    return rule


for _op, _exact in NEAREST.items():
    lower(_op)(_nearest_rule(_exact))


def _coordinate(i: Affine, n_in: int, n_out: int, s: Fraction, align: bool) -> tuple[Affine, int]:
    """src(i) = num(i) / den, with num affine in i (before the clamp at 0)."""
    p, q = s.numerator, s.denominator
    if align:
        return i * p, q
    return (2 * i + 1) * p - q, 2 * q


def _pieces(
    i: Affine, n_in: int, num: Affine, den: int
) -> list[tuple[tuple[Constraint, ...], Affine, bool]]:
    """(guards, lower neighbour, interpolate?) along one dim: below 0 the coordinate is clamped
    to 0 (no interpolation); at the last source element both neighbours coincide."""
    low = num // den
    pieces = [((lt(num, 0),), Affine(), False)]
    if n_in > 1:
        pieces.append(((ge(num, 0), lt(num, (n_in - 1) * den)), low, True))
    pieces.append(((ge(num, (n_in - 1) * den),), Affine(const=n_in - 1), False))
    return pieces


@lower(*LINEAR)
def _linear(
    ctx: LowerCtx, x: View, output_size: Any, align_corners: bool, scale_factors: Any = None
) -> View:
    b = ctx.b
    shape = tuple(ctx.shape)
    k = len(shape) - 2
    fs = _factors(scale_factors, k)
    w_dtype = ctx.dtype if ctx.dtype in (DType.F32, DType.F64) else DType.F32
    dims = []
    for d in range(k):
        n_in, n_out = x.shape[2 + d], shape[2 + d]
        s = _scale(n_in, n_out, fs[d], align_corners)
        dims.append((n_in, s))
    weights: list[View] = []
    for d, (n_in, s) in enumerate(dims):
        loops, (i,) = loop_vars("i", (shape[2 + d],))
        num, den = _coordinate(i, n_in, shape[2 + d], s, align_corners)
        w = b.temp(f"{ctx.hint}_w{d}", (shape[2 + d],), w_dtype)
        value = mul(cast(w_dtype, index_value(num % den)), 1.0 / den)
        b.emit(loops, w.base, (i,), Update.ASSIGN, value)
        weights.append(w)

    loops, idx = loop_vars("i", shape)
    out = b.temp(ctx.hint, shape, ctx.dtype)
    per_dim = []
    for d, (n_in, s) in enumerate(dims):
        num, den = _coordinate(idx[2 + d], n_in, shape[2 + d], s, align_corners)
        per_dim.append(_pieces(idx[2 + d], n_in, num, den))

    def combos(d: int) -> list[list[tuple[tuple[Constraint, ...], Affine, bool]]]:
        if d == k:
            return [[]]
        return [[p] + rest for p in per_dim[d] for rest in combos(d + 1)]

    for combo in combos(0):
        guards = tuple(g for gs, _, _ in combo for g in gs)

        def value(d: int, src: tuple[Affine, ...], combo: list = combo) -> Term:
            """Interpolate dims d.. given the source index of dims before d."""
            if d == k:
                return x.at(tuple(idx[:2]) + src)
            _, low, lerp = combo[d]
            a = value(d + 1, src + (low,), combo)
            if not lerp:
                return a
            c = value(d + 1, src + (low + 1,), combo)
            return add(a, mul(weights[d].at((idx[2 + d],)), sub(c, a)))

        b.emit(loops, out.base, idx, Update.ASSIGN, cast(ctx.dtype, value(0, ())), guards)
    return out


__all__ = ["LINEAR", "NEAREST"]
