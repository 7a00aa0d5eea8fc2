"""Dropout and bernoulli(p) as fixed patterns. Random ops cannot be compared with PyTorch element
by element: they are listed in RANDOM_OPS for the output checks to skip. For the bounds a draw is a
fixed pattern of the right density (position mod RANDOM_PERIOD below a threshold): an affine
condition, so dropout's rescaling multiplies exactly the kept elements and the draw itself counts
nothing once the IR passes turn the condition into guards. A real kernel also generates and
compares a random number per element: leaving that out can only lower the bound. (Draws of random
values, rand/randn/..., are in draws.py.)"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from solar.frontends import views
from solar.frontends.builder import call, cast, const, index_value, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, ge, lt
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

# Ops whose outputs are random: output checks cannot compare them with PyTorch.
RANDOM_OPS = frozenset({aten.native_dropout.default, aten.bernoulli.p})
RANDOM_PERIOD = 1000

Index = tuple[Affine, ...]


def _draw(shape: Sequence[int], idx: Index, p_true: float) -> tuple[Affine, int]:
    """The pattern that stands for a uniform draw: position mod RANDOM_PERIOD, and the threshold
    below which it counts as true (a fraction p_true of the positions)."""
    linear = Affine()
    for e, stride in zip(idx, [math.prod(shape[k + 1 :]) for k in range(len(shape))]):
        linear = linear + e * stride
    return linear % RANDOM_PERIOD, round(p_true * RANDOM_PERIOD)


@lower(aten.native_dropout.default)
def _dropout(ctx: LowerCtx, x: View, p: float, train: bool | None = True) -> tuple[View, View]:
    """Training: out = x / (1 - p) where kept, 0 where dropped (a multiply per kept element);
    mask = the draw."""
    b = ctx.b
    (shape, dtype), (_, mask_dtype) = ctx.meta(0), ctx.meta(1)
    loops, idx = loop_vars("i", shape)
    if train is False:
        return x, views.constant(True, shape, mask_dtype)
    draw, threshold = _draw(shape, idx, 1.0 - p)
    mask = b.temp(f"{ctx.hint}_mask", shape, mask_dtype)
    b.emit(loops, mask.base, idx, Update.ASSIGN, call(S.LT, index_value(draw), threshold))
    out = b.temp(ctx.hint, shape, dtype)
    if threshold > 0:
        b.emit(
            loops,
            out.base,
            idx,
            Update.ASSIGN,
            mul(x.at(idx), 1.0 / (1.0 - p)),
            [lt(draw, threshold)],
        )
    b.emit(loops, out.base, idx, Update.ASSIGN, const(0.0), [ge(draw, threshold)])
    return out, mask


@lower(aten.bernoulli.p)
def _bernoulli(ctx: LowerCtx, x: View, p: float = 0.5, *, generator: Any = None) -> View:
    """1 with probability p (the draw as a compare with the pattern)."""
    loops, idx = loop_vars("i", ctx.shape)
    draw, threshold = _draw(ctx.shape, idx, p)
    out = ctx.b.temp(ctx.hint, ctx.shape, ctx.dtype)
    ctx.b.emit(
        loops,
        out.base,
        idx,
        Update.ASSIGN,
        cast(ctx.dtype, call(S.LT, index_value(draw), threshold)),
    )
    return out


__all__ = ["RANDOM_OPS", "RANDOM_PERIOD"]
