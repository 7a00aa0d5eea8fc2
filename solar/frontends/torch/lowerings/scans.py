"""Scans (cumsum, cumprod) as the sequential recurrence out[0] = x[0]; out[s] = out[s-1] (op) x[s]:
one add (multiply) per element after the first, the fewest any scan needs (every output but the
first is a distinct sum). Reverse, exclusive and masked scans are views or elementwise ops in front
of it (flip, cat/narrow, x * mask). The recurrence is one statement inside an in-order loop over the
step `s`: it counts exactly n - 1 ops per row, the IR's size does not grow with n, and the
interpreter runs it step by step (each step vectorised over the other dimensions)."""

from __future__ import annotations

from typing import Any

import torch

from solar.frontends import builder
from solar.frontends.builder import call, cast, elementwise
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


SCAN_OPS = {Update.ADD: S.ADD, Update.MUL: S.MUL}


def scan(ctx: LowerCtx, x: View, dim: int, update: Update) -> View:
    """Inclusive scan of `x` along `dim` with the associative op of `update`."""
    if x.rank == 0:
        same = x.dtype == ctx.dtype
        return elementwise(
            ctx.b, ctx.hint, x.shape, ctx.dtype, [x], lambda t: t if same else cast(ctx.dtype, t)
        )
    combine = lambda a, b: call(SCAN_OPS[update], a, b)  # noqa: E731
    return builder.scan(ctx.b, ctx.hint, x, dim % x.rank, ctx.dtype, combine)


@lower(aten.cumsum.default)
def _cumsum(ctx: LowerCtx, x: View, dim: int, dtype: Any = None) -> View:
    return scan(ctx, x, dim, Update.ADD)


@lower(aten.cumprod.default)
def _cumprod(ctx: LowerCtx, x: View, dim: int, dtype: Any = None) -> View:
    return scan(ctx, x, dim, Update.MUL)
