"""Random generation in forward: rand / randn / randint (and their _like forms), uniform_ and
normal_ (as export's functional uniform / normal_functional), randperm, plus the uninitialised
tensors such draws fill (empty, empty_like, empty_strided).

A draw is the IR's counter-based generator: `random(stream, counter)` (uniform in [0, 1)) or
`randn(stream, counter)` (standard normal) at each element's row-major position, with one stream
per call; the interpreter runs it (splitmix64; values differ from PyTorch's, so outputs are
checked by their range and statistics, never element by element: RANDOM_OPS). Priced as what any
generator must do: the output bytes, one BIT-class op per element for the draw (a floor: real
generators such as Philox need far more) and the exact affine rescaling. No assumption is made
about the values drawn; a consumer that indexes with them (randperm) reads indirectly.

randperm(n) is the fixed permutation i -> (a*i + 1) mod n with a coprime to n: a permutation as
any draw is, written as an index map (no generator op is charged)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import Term, add, call, cast, index_value, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.dtypes import DType
from solar.ir.nodes import Cast, Index
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

RANDOM_OPS = frozenset(
    {
        aten.rand.default,
        aten.randn.default,
        aten.randint.default,
        aten.randint.low,
        aten.rand_like.default,
        aten.randn_like.default,
        aten.randint_like.default,
        aten.randint_like.low_dtype,
        aten.uniform.default,
        aten.normal_functional.default,
        aten.normal.Tensor_float,
        aten.normal.float_Tensor,
        aten.normal.Tensor_Tensor,
        aten.normal.float_float,
        aten.randperm.default,
    }
)
NOTES = {
    op: "random draws: priced as their output bytes and one ALU op per element (a floor under any "
    "generator's work; the values drawn are not assumed to have any structure)"
    for op in RANDOM_OPS
}
# Ops whose values are undefined: read as zeros (one admissible content); what fills them (a
# draw, an in-place copy) is what the program computes.
UNINITIALISED = frozenset(
    {
        aten.empty.memory_format,
        aten.empty_like.default,
        aten.empty_strided.default,
        aten.empty_permuted.default,
    }
)


def _position(shape: Sequence[int], idx: tuple[Affine, ...]) -> Affine:
    linear = Affine()
    for e, stride in zip(idx, [math.prod(shape[k + 1 :]) for k in range(len(shape))]):
        linear = linear + e * stride
    return linear


def _draw(
    ctx: LowerCtx, op: S, scale: float = 1.0, shift: float = 0.0, integer: bool = False
) -> View:
    """out = shift + scale * draw (floored first for integer outputs), at every element."""
    shape, dtype = ctx.shape, ctx.dtype
    stream = zlib.crc32(ctx.hint.encode()) & 0xFFFF
    loops, idx = loop_vars("i", shape)
    d: Term = call(op, stream, index_value(_position(shape, idx)))
    if scale != 1.0:
        d = mul(d, scale)
    if integer:
        d = call(S.FLOOR, d)
    if shift != 0.0:
        d = add(d, shift)
    out = ctx.b.temp(ctx.hint, shape, dtype)
    ctx.b.emit(loops, out.base, idx, Update.ASSIGN, cast(dtype, d))
    return out


def _require_float(ctx: LowerCtx, what: str) -> None:
    if not ctx.dtype.is_float:
        raise SolarError(
            f"{what} makes {ctx.dtype.text} values; only floating-point draws are defined"
        )


@lower(aten.rand.default, aten.rand_like.default)
def _rand(ctx: LowerCtx, *args: Any, **kwargs: Any) -> View:
    _require_float(ctx, "rand")
    return _draw(ctx, S.RANDOM)


@lower(aten.randn.default, aten.randn_like.default)
def _randn(ctx: LowerCtx, *args: Any, **kwargs: Any) -> View:
    _require_float(ctx, "randn")
    return _draw(ctx, S.RANDN)


def _randint(ctx: LowerCtx, low: int, high: int) -> View:
    if high <= low:
        raise SolarError(f"randint with an empty range [{low}, {high})")
    return _draw(ctx, S.RANDOM, scale=float(high - low), shift=float(low), integer=True)


@lower(aten.randint.low)
def _randint_low(ctx: LowerCtx, low: int, high: int, size: Sequence[int], **kwargs: Any) -> View:
    return _randint(ctx, int(low), int(high))


@lower(aten.randint.default)
def _randint_high(ctx: LowerCtx, high: int, size: Sequence[int], **kwargs: Any) -> View:
    return _randint(ctx, 0, int(high))


@lower(aten.randint_like.default)
def _randint_like(ctx: LowerCtx, x: View, high: int, **kwargs: Any) -> View:
    return _randint(ctx, 0, int(high))


@lower(aten.randint_like.low_dtype)
def _randint_like_low(ctx: LowerCtx, x: View, low: int, high: int, **kwargs: Any) -> View:
    return _randint(ctx, int(low), int(high))


@lower(aten.uniform.default)
def _uniform(ctx: LowerCtx, x: View, low: float = 0.0, high: float = 1.0, **kwargs: Any) -> View:
    _require_float(ctx, "uniform_")
    return _draw(ctx, S.RANDOM, scale=float(high) - float(low), shift=float(low))


@lower(aten.normal_functional.default)
def _normal(ctx: LowerCtx, x: View, mean: float = 0.0, std: float = 1.0, **kwargs: Any) -> View:
    _require_float(ctx, "normal_")
    return _draw(ctx, S.RANDN, scale=float(std), shift=float(mean))


@lower(aten.normal.float_float)
def _normal_sized(
    ctx: LowerCtx, mean: float, std: float, size: Sequence[int], **kwargs: Any
) -> View:
    _require_float(ctx, "normal")
    return _draw(ctx, S.RANDN, scale=float(std), shift=float(mean))


def _normal_tensors(ctx: LowerCtx, mean: View | float, std: View | float) -> View:
    """mean + std * randn with tensor (broadcast) mean and/or std."""
    _require_float(ctx, "normal")
    z = _draw(ctx, S.RANDN)
    loops, idx = loop_vars("i", ctx.shape)

    def at(v: View | float) -> Term:
        return views.expand(v, ctx.shape).at(idx) if isinstance(v, View) else float(v)

    ctx.b.emit(
        loops, z.base, idx, Update.ASSIGN, cast(ctx.dtype, add(at(mean), mul(at(std), z.at(idx))))
    )
    return z


@lower(aten.normal.Tensor_float)
def _normal_tf(ctx: LowerCtx, mean: View, std: float = 1.0, **kwargs: Any) -> View:
    return _normal_tensors(ctx, mean, std)


@lower(aten.normal.float_Tensor)
def _normal_ft(ctx: LowerCtx, mean: float, std: View, **kwargs: Any) -> View:
    return _normal_tensors(ctx, mean, std)


@lower(aten.normal.Tensor_Tensor)
def _normal_tt(ctx: LowerCtx, mean: View, std: View, **kwargs: Any) -> View:
    return _normal_tensors(ctx, mean, std)


@lower(aten.randperm.default)
def _randperm(ctx: LowerCtx, n: int, **kwargs: Any) -> View:
    n = int(n)
    a = next(k for k in range(max(2, n // 2 + 1), 2 * n + 3) if math.gcd(k, n) == 1) if n > 1 else 1
    dtype = ctx.dtype
    return View((n,), dtype, lambda idx: (((), Cast(dtype, Index((idx[0] * a + 1) % n))),))


@lower(*UNINITIALISED)
def _empty(ctx: LowerCtx, *args: Any, **kwargs: Any) -> View:
    return views.constant(False if ctx.dtype == DType.BOOL else 0, ctx.shape, ctx.dtype)


__all__ = ["RANDOM_OPS", "UNINITIALISED"]
