"""Pooling (max and average, 1–3 spatial dims, padding, dilation, ceil_mode, count_include_pad,
divisor_override; adaptive average and max) as one guarded window reduction per op: guards drop
padding and, for adaptive windows, the positions past each window's end, so the work counted is
exactly the window elements that lie in the input. An average's divisor is constant on runs of
output positions; the scaling statement is split into one guarded piece per run, so it costs one
multiply per output. Max pooling's index output (first position of the maximum, flattened over the
spatial dims as PyTorch returns it) costs nothing when the program never reads it (the demand
pass removes it)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from solar.frontends.builder import Term, call, const, identity, index_value, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, Constraint, ge, lt
from solar.ir.dtypes import DType
from solar.ir.nodes import Const
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


@dataclass(frozen=True)
class Sliding:
    """A fixed window along one dim: element k of output o reads o*stride + k*dilation - pad."""

    size: int
    kernel: int
    stride: int
    pad: int
    dilation: int

    @property
    def extent(self) -> int:
        return self.kernel

    def position(self, o: Affine, k: Affine) -> Affine:
        return o * self.stride + k * self.dilation - self.pad

    def guards(self, o: Affine, k: Affine) -> list[Constraint]:
        pos = self.position(o, k)
        return [ge(pos, 0), lt(pos, self.size)]

    def divisor(self, o: int, count_include_pad: bool) -> int:
        """PyTorch's avg_pool divisor: window positions inside the padded input, or inside the
        input only."""
        start = o * self.stride - self.pad
        end = min(start + self.kernel, self.size + self.pad)
        if count_include_pad:
            return end - start
        return min(end, self.size) - max(start, 0)


@dataclass(frozen=True)
class Adaptive:
    """Adaptive window along one dim: output o covers [floor(o*size/out), ceil((o+1)*size/out))."""

    size: int
    out: int

    def bounds(self, o: int) -> tuple[int, int]:
        return (o * self.size) // self.out, -((-(o + 1) * self.size) // self.out)

    @property
    def extent(self) -> int:
        return max(e - s for s, e in map(self.bounds, range(self.out)))

    def position(self, o: Affine, k: Affine) -> Affine:
        return (o * self.size) // self.out + k

    def guards(self, o: Affine, k: Affine) -> list[Constraint]:
        end = ((o + 1) * self.size + self.out - 1) // self.out
        return [lt(self.position(o, k), end)]

    def divisor(self, o: int, count_include_pad: bool = True) -> int:
        s, e = self.bounds(o)
        return e - s


Axis = Sliding | Adaptive


def _per_dim(
    values: Sequence[int] | int, nd: int, default: Sequence[int] | None = None
) -> list[int]:
    if isinstance(values, int):
        return [values] * nd
    values = list(values)
    if not values and default is not None:
        return list(default)
    return values * nd if len(values) == 1 else values


def sliding_axes(
    x: View, nd: int, kernel: Any, stride: Any, padding: Any, dilation: Any = 1
) -> list[Axis]:
    k = _per_dim(kernel, nd)
    s = _per_dim(stride, nd, default=k)
    p, d = _per_dim(padding, nd), _per_dim(dilation, nd)
    spatial = x.shape[x.rank - nd :]
    return [Sliding(spatial[i], k[i], s[i], p[i], d[i]) for i in range(nd)]


def adaptive_axes(x: View, output_size: Sequence[int]) -> list[Axis]:
    nd = len(output_size)
    spatial = x.shape[x.rank - nd :]
    return [Adaptive(spatial[i], int(output_size[i])) for i in range(nd)]


Value = Callable[[Term, tuple[Affine, ...], list[Affine]], Term]


def window_reduce(
    ctx: LowerCtx,
    x: View,
    axes: list[Axis],
    out_shape: tuple[int, ...],
    update: Update,
    dtype: DType,
    hint: str,
    value: Value = lambda t, o, pos: t,
) -> View:
    """out[o] = identity; out[o] (update)= value(x[window element]) over the guarded window."""
    b = ctx.b
    lead = x.rank - len(axes)
    out_loops, o = loop_vars("i", out_shape)
    red_loops, r = loop_vars("r", [a.extent for a in axes])
    pos = [a.position(o[lead + d], r[d]) for d, a in enumerate(axes)]
    guards = [g for d, a in enumerate(axes) for g in a.guards(o[lead + d], r[d])]
    out = b.temp(hint, out_shape, dtype)
    b.emit(out_loops, out.base, o, Update.ASSIGN, const(identity(update, dtype)))
    b.emit(
        out_loops + red_loops,
        out.base,
        o,
        update,
        value(x.at(o[:lead] + tuple(pos)), o, pos),
        guards,
    )
    return out


def _runs(values: Sequence[int]) -> list[tuple[int, int, int]]:
    """Maximal runs (first, last, value) of equal consecutive values."""
    runs: list[tuple[int, int, int]] = []
    for i, v in enumerate(values):
        if runs and runs[-1][2] == v:
            runs[-1] = (runs[-1][0], i, v)
        else:
            runs.append((i, i, v))
    return runs


def reciprocal_divisor(
    axes: list[Axis], o: Sequence[Affine], out_spatial: Sequence[int], count_include_pad: bool
) -> Term:
    """1/divisor at output o as guarded constants: one alternative per combination of runs."""
    per_axis = [
        _runs([a.divisor(i, count_include_pad) for i in range(n)])
        for a, n in zip(axes, out_spatial)
    ]
    alts = []
    for combo in itertools.product(*per_axis):
        guards: list[Constraint] = []
        for (first, last, _), e, n in zip(combo, o, out_spatial):
            if first > 0:
                guards.append(ge(e, first))
            if last < n - 1:
                guards.append(ge(last, e))
        count = math.prod(c for _, _, c in combo)
        alts.append((tuple(guards), Const(1.0 / count if count else math.inf)))
    return tuple(alts)


def _average(
    ctx: LowerCtx, x: View, axes: list[Axis], count_include_pad: bool, divisor_override: int | None
) -> View:
    shape = ctx.shape
    out = window_reduce(ctx, x, axes, shape, Update.ADD, ctx.dtype, ctx.hint)
    loops, o = loop_vars("i", shape)
    spatial_o = o[len(shape) - len(axes) :]
    if divisor_override:
        scale: Term = const(1.0 / divisor_override)
    else:
        scale = reciprocal_divisor(
            axes, spatial_o, shape[len(shape) - len(axes) :], count_include_pad
        )
    ctx.b.emit(loops, out.base, o, Update.ASSIGN, mul(out.at(o), scale))
    return out


def _maximum(ctx: LowerCtx, x: View, axes: list[Axis]) -> tuple[View, View]:
    """Values, and the flat spatial index of each window's first maximum."""
    shape, dtype = ctx.meta(0)
    values = window_reduce(ctx, x, axes, shape, Update.MAX, dtype, f"{ctx.hint}_values")
    sizes = [a.size for a in axes]

    def first_max(t: Term, o: tuple[Affine, ...], pos: list[Affine]) -> Term:
        flat = Affine()
        for p, stride in zip(pos, [math.prod(sizes[d + 1 :]) for d in range(len(sizes))]):
            flat = flat + p * stride
        big = math.prod(sizes)
        return call(S.WHERE, call(S.EQ, t, values.at(o)), index_value(flat), big)

    indices = window_reduce(
        ctx, x, axes, shape, Update.MIN, DType.I64, f"{ctx.hint}_indices", first_max
    )
    return values, indices


def _max_pool(nd: int) -> Callable[..., tuple[View, View]]:
    def rule(
        ctx: LowerCtx,
        x: View,
        kernel_size: Any,
        stride: Any = (),
        padding: Any = 0,
        dilation: Any = 1,
        ceil_mode: bool = False,
    ) -> tuple[View, View]:
        return _maximum(ctx, x, sliding_axes(x, nd, kernel_size, stride, padding, dilation))

    return rule


def _avg_pool(nd: int) -> Callable[..., View]:
    def rule(
        ctx: LowerCtx,
        x: View,
        kernel_size: Any,
        stride: Any = (),
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> View:
        axes = sliding_axes(x, nd, kernel_size, stride, padding)
        return _average(ctx, x, axes, count_include_pad, divisor_override)

    return rule


@lower(aten.adaptive_max_pool2d.default, aten.adaptive_max_pool3d.default)
def _adaptive_max_pool(ctx: LowerCtx, x: View, output_size: Sequence[int]) -> tuple[View, View]:
    return _maximum(ctx, x, adaptive_axes(x, output_size))


@lower(aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default)
def _adaptive_avg_pool(ctx: LowerCtx, x: View, output_size: Sequence[int]) -> View:
    return _average(ctx, x, adaptive_axes(x, output_size), True, None)


lower(aten.max_pool2d_with_indices.default)(_max_pool(2))
lower(aten.max_pool3d_with_indices.default)(_max_pool(3))
lower(aten.avg_pool2d.default)(_avg_pool(2))
lower(aten.avg_pool3d.default)(_avg_pool(3))

__all__ = [
    "Adaptive",
    "Sliding",
    "adaptive_axes",
    "reciprocal_divisor",
    "sliding_axes",
    "window_reduce",
]
