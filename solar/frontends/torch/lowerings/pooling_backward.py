"""Backward of pooling (max with indices, average, adaptive average and max; 2-D and 3-D) as one
guarded gather per op: each input position sums, over the windows that contain it, what those
windows send back — the output gradient scaled by the window's divisor (average), or the output
gradient where the window's saved index is this position (max). Guards keep exactly the (position,
window) pairs of the forward, so the work counted is the forward's window elements."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from solar.frontends.builder import Term, call, const, index_value, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.pooling import (
    Axis,
    Sliding,
    adaptive_axes,
    reciprocal_divisor,
    sliding_axes,
)
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, Constraint, ge, lt
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


@dataclass(frozen=True)
class Windows:
    """The windows of one axis that contain an input position p: the j-th candidate is output
    `output(p, j)` for j < `extent`, valid where `guards(p, j)` hold."""

    axis: Axis
    out: int  # outputs along the axis

    @property
    def extent(self) -> int:
        a = self.axis
        if isinstance(a, Sliding):
            return a.kernel
        starts = [(p * a.out) // a.size for p in range(a.size)]
        ends = [-((-(p + 1) * a.out) // a.size) for p in range(a.size)]
        return max(e - s for s, e in zip(starts, ends))

    def output(self, p: Affine, j: Affine) -> Affine:
        a = self.axis
        if isinstance(a, Sliding):
            return (p + a.pad - j * a.dilation) // a.stride
        return (p * a.out) // a.size + j

    def guards(self, p: Affine, j: Affine) -> list[Constraint]:
        a = self.axis
        if isinstance(a, Sliding):
            # tap j of output o reads o*stride + j*dilation - pad = p
            num = p + a.pad - j * a.dilation
            exact = [Constraint(num % a.stride, equality=True)] if a.stride > 1 else []
            return [ge(num, 0), lt(num, (self.out - 1) * a.stride + 1), *exact]
        # windows (p*out)//size + j with j past the last window holding p: its start is past p
        o = self.output(p, j)
        return [lt(o, self.out), ge(p, (o * a.size) // a.out)]


Value = Callable[[tuple[Affine, ...], tuple[Affine, ...]], Term]


def window_gather(ctx: LowerCtx, x: View, axes: list[Axis], grad: View, value: Value) -> View:
    """grad_input[p] = Σ over the windows o holding p of value(o, p) (o and p full indices)."""
    b = ctx.b
    lead = x.rank - len(axes)
    windows = [Windows(a, n) for a, n in zip(axes, grad.shape[lead:])]
    loops, p = loop_vars("i", x.shape)
    w_loops, j = loop_vars("w", [w.extent for w in windows])
    o = p[:lead] + tuple(w.output(p[lead + d], j[d]) for d, w in enumerate(windows))
    guards = [g for d, w in enumerate(windows) for g in w.guards(p[lead + d], j[d])]
    out = b.temp(ctx.hint, x.shape, ctx.dtype)
    b.emit(loops, out.base, p, Update.ASSIGN, const(0.0))
    b.emit(loops + w_loops, out.base, p, Update.ADD, value(o, p), guards)
    return out


def _flat(p: Sequence[Affine], sizes: Sequence[int]) -> Affine:
    """The flat spatial index PyTorch's max pooling saves."""
    flat = Affine()
    for d, q in enumerate(p):
        flat = flat + q * math.prod(sizes[d + 1 :])
    return flat


def _max_backward(ctx: LowerCtx, grad: View, x: View, axes: list[Axis], indices: View) -> View:
    lead = x.rank - len(axes)
    sizes = x.shape[lead:]

    def value(o: tuple[Affine, ...], p: tuple[Affine, ...]) -> Term:
        hit = call(S.EQ, indices.at(o), index_value(_flat(p[lead:], sizes)))
        return call(S.WHERE, hit, grad.at(o), 0.0)

    return window_gather(ctx, x, axes, grad, value)


def _avg_backward(
    ctx: LowerCtx,
    grad: View,
    x: View,
    axes: list[Axis],
    count_include_pad: bool,
    divisor_override: int | None,
) -> View:
    lead = x.rank - len(axes)
    out_spatial = grad.shape[lead:]

    def value(o: tuple[Affine, ...], p: tuple[Affine, ...]) -> Term:
        if divisor_override:
            return mul(grad.at(o), 1.0 / divisor_override)
        scale = reciprocal_divisor(axes, o[lead:], out_spatial, count_include_pad)
        return mul(grad.at(o), scale)

    return window_gather(ctx, x, axes, grad, value)


def _max_pool_backward(nd: int) -> Callable[..., View]:
    def rule(
        ctx: LowerCtx,
        grad: View,
        x: View,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        ceil_mode: bool,
        indices: View,
    ) -> View:
        axes = sliding_axes(x, nd, kernel_size, stride, padding, dilation)
        return _max_backward(ctx, grad, x, axes, indices)

    return rule


def _avg_pool_backward(nd: int) -> Callable[..., View]:
    def rule(
        ctx: LowerCtx,
        grad: View,
        x: View,
        kernel_size: Any,
        stride: Any,
        padding: Any,
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: int | None = None,
    ) -> View:
        axes = sliding_axes(x, nd, kernel_size, stride, padding)
        return _avg_backward(ctx, grad, x, axes, count_include_pad, divisor_override)

    return rule


def _adaptive_avg_pool_backward(nd: int) -> Callable[..., View]:
    def rule(ctx: LowerCtx, grad: View, x: View) -> View:
        return _avg_backward(ctx, grad, x, adaptive_axes(x, grad.shape[-nd:]), True, None)

    return rule


def _adaptive_max_pool_backward(nd: int) -> Callable[..., View]:
    def rule(ctx: LowerCtx, grad: View, x: View, indices: View) -> View:
        return _max_backward(ctx, grad, x, adaptive_axes(x, grad.shape[-nd:]), indices)

    return rule


lower(aten.max_pool2d_with_indices_backward.default)(_max_pool_backward(2))
lower(aten.max_pool3d_with_indices_backward.default)(_max_pool_backward(3))
lower(aten.avg_pool2d_backward.default)(_avg_pool_backward(2))
lower(aten.avg_pool3d_backward.default)(_avg_pool_backward(3))
lower(aten._adaptive_avg_pool2d_backward.default)(_adaptive_avg_pool_backward(2))
lower(aten._adaptive_avg_pool3d_backward.default)(_adaptive_avg_pool_backward(3))
lower(aten.adaptive_max_pool2d_backward.default)(_adaptive_max_pool_backward(2))
lower(aten.adaptive_max_pool3d_backward.default)(_adaptive_max_pool_backward(3))


def _valid_indices(nd: int, position: int) -> Callable[[Any, torch.Generator], Any]:
    """Random arguments of a max-pooling backward with the saved indices the forward gives for
    its random input (`solar verify` on random data)."""

    def fix(args: Any, gen: torch.Generator) -> Any:
        args = list(args)
        x = args[1]
        if position == 7:
            forward = aten.max_pool2d_with_indices if nd == 2 else aten.max_pool3d_with_indices
            _, idx = forward(x, *args[2:7])
        else:
            forward = aten.adaptive_max_pool2d if nd == 2 else aten.adaptive_max_pool3d
            _, idx = forward(x, list(args[0].shape[-nd:]))
        args[position] = idx
        return tuple(args)

    return fix


CHECK_ARGUMENTS = {
    aten.max_pool2d_with_indices_backward.default: _valid_indices(2, 7),
    aten.max_pool3d_with_indices_backward.default: _valid_indices(3, 7),
    aten.adaptive_max_pool2d_backward.default: _valid_indices(2, 2),
    aten.adaptive_max_pool3d_backward.default: _valid_indices(3, 2),
}

__all__ = ["Windows", "window_gather"]
