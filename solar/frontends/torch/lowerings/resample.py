"""F.interpolate's kept forms: nearest and nearest-exact (1-3 dims) as index maps (no statements),
and linear / bilinear / trilinear as lerps over the two source neighbours of each output
coordinate, `(1 - w)*a + w*b` with both weights precomputed (3 FLOPs): either all dims at once (2^k - 1 lerps per output element)
or one dim per pass in the best order (separable: for 2x upsampling in 2-D, 1.5 lerps per output
element), whichever needs fewer lerps. Bicubic is decomposed by torch.export into gathers and
arithmetic.

Source coordinates are exact rationals: the scale is in/out (or 1/scale_factor when one is given,
as PyTorch does), and PyTorch's `src = scale*(i + 1/2) - 1/2` (clamped at 0; align_corners:
`(in-1)/(out-1) * i`) becomes floor-divisions and moduli of affine index expressions, so the
neighbours are affine reads and the boundary cases are guarded pieces. The weight of each output
position along a dim is one small temp per dim (as many elements as that output dim)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import torch

from solar.frontends.builder import Term, add, cast, index_value, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
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
# Kept whole by the loader (their decompositions gather with index tensors and count the
# coordinate arithmetic per element).
PRESERVE = frozenset({*NEAREST, *LINEAR})


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


Dim = tuple[int, int, int, Fraction]  # (tensor dim, input size, output size, scale)


def _lerp_pass(
    ctx: LowerCtx,
    x: View,
    dims: list[Dim],
    align: bool,
    weights: dict[int, tuple[View, View]],
    name: str,
    dtype: DType,
) -> View:
    """Interpolate `x` along `dims` at once (a chain of lerps over their corners); the other dims
    keep their index."""
    b = ctx.b
    shape = list(x.shape)
    for d, _, n_out, _ in dims:
        shape[d] = n_out
    loops, idx = loop_vars("i", shape)
    out = b.temp(name, shape, dtype)
    per_dim = [
        _pieces(idx[d], n_in, *_coordinate(idx[d], n_in, n_out, s, align))
        for d, n_in, n_out, s in dims
    ]

    def combos(k: int) -> list[list[tuple[tuple[Constraint, ...], Affine, bool]]]:
        if k == len(dims):
            return [[]]
        return [[p] + rest for p in per_dim[k] for rest in combos(k + 1)]

    for combo in combos(0):
        guards = tuple(g for gs, _, _ in combo for g in gs)

        def value(k: int, src: dict[int, Affine], combo: list = combo) -> Term:
            """Interpolate dims k.. of `dims` given the source index of the ones before."""
            if k == len(dims):
                return x.at(tuple(src.get(d, e) for d, e in enumerate(idx)))
            d = dims[k][0]
            _, low, lerp = combo[k]
            a = value(k + 1, {**src, d: low}, combo)
            if not lerp:
                return a
            c = value(k + 1, {**src, d: low + 1}, combo)
            w_lo, w_hi = weights[d]
            return add(mul(w_lo.at((idx[d],)), a), mul(w_hi.at((idx[d],)), c))

        b.emit(loops, out.base, idx, Update.ASSIGN, cast(dtype, value(0, {})), guards)
    return out


def pass_schedule(x_shape: tuple[int, ...], dims: list[Dim]) -> list[list[Dim]]:
    """The cheapest schedule of lerp passes: all dims at once (2^k - 1 lerps per output element)
    or one dim per pass in the best order (a lerp per element of each pass's output), by the
    number of lerps."""
    rest = 1
    for k, n in enumerate(x_shape):
        if k not in {d for d, _, _, _ in dims}:
            rest *= n
    out_points = rest
    for _, _, n_out, _ in dims:
        out_points *= n_out
    best: tuple[int, list[list[Dim]]] = ((2 ** len(dims) - 1) * out_points, [dims])
    for order in itertools.permutations(dims):
        sizes = {d: n_in for d, n_in, _, _ in dims}
        lerps = 0
        for d, _, n_out, _ in order:
            sizes[d] = n_out
            lerps += rest * math.prod(sizes.values())
        if lerps < best[0]:
            best = (lerps, [[dim] for dim in order])
    return best[1]


@lower(*LINEAR)
def _linear(
    ctx: LowerCtx, x: View, output_size: Any, align_corners: bool, scale_factors: Any = None
) -> View:
    b = ctx.b
    shape = tuple(ctx.shape)
    k = len(shape) - 2
    fs = _factors(scale_factors, k)
    w_dtype = ctx.dtype if ctx.dtype in (DType.F32, DType.F64) else DType.F32
    dims: list[Dim] = []
    weights: dict[int, tuple[View, View]] = {}
    for d in range(k):
        n_in, n_out = x.shape[2 + d], shape[2 + d]
        s = _scale(n_in, n_out, fs[d], align_corners)
        dims.append((2 + d, n_in, n_out, s))
        loops, (i,) = loop_vars("i", (n_out,))
        num, den = _coordinate(i, n_in, n_out, s, align_corners)
        frac = (
            num % den
        )  # the weight of the upper neighbour is frac / den, the lower one's the rest
        pair = []
        for side, value in (("lo", den - frac), ("hi", frac)):
            w = b.temp(f"{ctx.hint}_w{d}{side}", (n_out,), w_dtype)
            b.emit(
                loops,
                w.base,
                (i,),
                Update.ASSIGN,
                mul(cast(w_dtype, index_value(value)), 1.0 / den),
            )
            pair.append(w)
        weights[2 + d] = (pair[0], pair[1])
    schedule = pass_schedule(x.shape, dims)
    for n, group in enumerate(schedule):
        last = n == len(schedule) - 1
        name = ctx.hint if last else f"{ctx.hint}_pass{n}"
        x = _lerp_pass(ctx, x, group, align_corners, weights, name, ctx.dtype if last else w_dtype)
    return x


__all__ = ["LINEAR", "NEAREST", "PRESERVE"]
