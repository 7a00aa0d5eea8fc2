"""Scans (cumsum, cumprod) as the sequential recurrence out[0] = x[0]; out[s] = out[s-1] (op) x[s]:
one add (multiply) per element after the first, the fewest any scan needs (every output but the
first is a distinct sum). Reverse, exclusive and masked scans are views or elementwise ops in front
of it (flip, cat/narrow, x * mask). The recurrence is one statement inside an in-order loop over the
step `s`: it counts exactly n - 1 ops per row, the IR's size does not grow with n, and the
interpreter runs it step by step (each step vectorised over the other dimensions)."""

from __future__ import annotations

from typing import Any

import torch

from solar.frontends.builder import Term, call, cast, elementwise, loop_vars
from solar.frontends.torch.convert import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


SCAN_OPS = {Update.ADD: S.ADD, Update.MUL: S.MUL}


def scan(ctx: LowerCtx, x: View, dim: int, update: Update) -> View:
    """Inclusive scan of `x` along `dim` with the associative op of `update`."""
    b, dtype = ctx.b, ctx.dtype

    def load(v: View, index: tuple[Affine, ...]) -> Term:
        return v.at(index) if v.dtype == dtype else cast(dtype, v.at(index))

    if x.rank == 0 or x.shape[dim % x.rank] < 2:
        same = x.dtype == dtype
        return elementwise(
            b, ctx.hint, x.shape, dtype, [x], lambda t: t if same else cast(dtype, t)
        )
    d_ax = dim % x.rank
    n = x.shape[d_ax]
    out = b.temp(ctx.hint, x.shape, dtype)
    loops, idx = loop_vars("i", x.shape)
    other = [lp for k, lp in enumerate(loops) if k != d_ax]

    def put(pos: Affine) -> tuple[Affine, ...]:
        return tuple(pos if k == d_ax else e for k, e in enumerate(idx))

    b.emit(other, out.base, put(Affine()), Update.ASSIGN, load(x, put(Affine())))
    with b.in_order("s", n - 1) as s:
        value = call(SCAN_OPS[update], out.at(put(s)), load(x, put(s + 1)))
        b.emit(other, out.base, put(s + 1), Update.ASSIGN, value)
    return out


@lower(aten.cumsum.default)
def _cumsum(ctx: LowerCtx, x: View, dim: int, dtype: Any = None) -> View:
    return scan(ctx, x, dim, Update.ADD)


@lower(aten.cumprod.default)
def _cumprod(ctx: LowerCtx, x: View, dim: int, dtype: Any = None) -> View:
    return scan(ctx, x, dim, Update.MUL)
