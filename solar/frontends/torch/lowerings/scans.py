"""Scans (cumsum, cumprod) as the sequential recurrence out[0] = x[0]; out[s] = out[s-1] (op) x[s]:
one add (multiply) per element after the first, the fewest any scan needs (every output but the
first is a distinct sum). Reverse, exclusive and masked scans are views or elementwise ops in front
of it (flip, cat/narrow, x * mask).

The IR runs a statement's whole domain at once, so a loop-carried dependence cannot execute in one
statement. Two forms (`ctx.executable`, as in recurrent.py):
- analysis form: the recurrence as one statement over the step `s` — its domain counts exactly
  n - 1 ops per row, and the IR's size does not grow with n;
- executable form (what `solar verify` and the lowering tests run): a work-efficient parallel scan
  (Brent–Kung: an up-sweep and a down-sweep of strided in-place updates, 2·log2(n) statements) that
  computes the same values. It counts 2n - 2 - log2(n) ops for n a power of two — any log-depth
  scan needs at least 2n - 2 - depth (Snir, J. Algorithms 1986) — which is why the analysis counts
  the recurrence instead. One statement per step would also execute, but n statements make output
  checks and IR passes slow for long scans.
tests/frontends/test_torch_coverage.py runs the analysis form's recurrence step by step."""

from __future__ import annotations

from typing import Any

import torch

from solar.frontends.builder import Term, call, cast, elementwise, loop_vars
from solar.frontends.torch.convert import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, var
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


SCAN_OPS = {Update.ADD: S.ADD, Update.MUL: S.MUL}


def sweep_strides(n: int) -> list[int]:
    """Strides d = 1, 2, 4, ... (2d <= n) of the Brent–Kung up-sweep (the down-sweep: reversed)."""
    out, d = [], 1
    while 2 * d <= n:
        out.append(d)
        d *= 2
    return out


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

    if not ctx.executable:
        b.emit(other, out.base, put(Affine()), Update.ASSIGN, load(x, put(Affine())))
        s = var("s") + 1
        value = call(SCAN_OPS[update], out.at(put(s - 1)), load(x, put(s)))
        b.emit(other + [("s", n - 1)], out.base, put(s), Update.ASSIGN, value)
        return out
    b.emit(loops, out.base, idx, Update.ASSIGN, load(x, idx))
    m = var("m")

    def sweep(count: int, write: Affine, read: Affine) -> None:
        b.emit(other + [("m", count)], out.base, put(write), update, out.at(put(read)))

    strides = sweep_strides(n)
    for d in strides:  # 2d·m + 2d - 1 absorbs the block that ends at 2d·m + d - 1
        sweep(n // (2 * d), m * (2 * d) + 2 * d - 1, m * (2 * d) + d - 1)
    for d in reversed(strides):  # 2d·m + 3d - 1 absorbs the prefix that ends at 2d·m + 2d - 1
        sweep((n - d) // (2 * d), m * (2 * d) + 3 * d - 1, m * (2 * d) + 2 * d - 1)
    return out


@lower(aten.cumsum.default)
def _cumsum(ctx: LowerCtx, x: View, dim: int, dtype: Any = None) -> View:
    return scan(ctx, x, dim, Update.ADD)


@lower(aten.cumprod.default)
def _cumprod(ctx: LowerCtx, x: View, dim: int, dtype: Any = None) -> View:
    return scan(ctx, x, dim, Update.MUL)
