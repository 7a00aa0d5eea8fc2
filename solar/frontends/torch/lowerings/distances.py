"""torch.cdist (`_cdist_forward`): pairwise p-norm distances between the rows of x1 [..., P, M] and
x2 [..., R, M]. p = 2 is lowered as PyTorch's matrix-multiply form,
sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)): one contraction (a GEMM: tensor cores may run it) plus the row
norms, the cheapest exact evaluation (the direct form spends a subtract, a multiply and an add per
(p, r, m) point on the SIMT pipes). Other p: the direct reduction of |a - b|^p (p = 1: sum of
|a - b|; p = inf: max; p = 0: count of differences)."""

from __future__ import annotations

import math
from typing import Any

import torch

from solar.frontends import views
from solar.frontends.builder import (
    Term,
    add,
    call,
    cast,
    const,
    contract,
    loop_vars,
    mul,
    reduce,
    sub,
)
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

Index = tuple[Affine, ...]


@lower(aten._cdist_forward.default)
def _cdist(ctx: LowerCtx, x1: View, x2: View, p: float, compute_mode: Any = None) -> View:
    shape, dtype = tuple(ctx.shape), ctx.dtype
    batch = shape[:-2]
    m = x1.shape[-1]
    a = views.expand(x1, batch + x1.shape[-2:])
    c = views.expand(x2, batch + x2.shape[-2:])
    nb = len(batch)

    def left(o: Index, r: Index) -> Term:
        return a.at(o[:nb] + (o[nb], r[0]))

    def right(o: Index, r: Index) -> Term:
        return c.at(o[:nb] + (o[nb + 1], r[0]))

    if p == 2:
        dot = contract(ctx.b, f"{ctx.hint}_dot", shape, dtype, (m,), left, right)
        sq_a, sq_c = (  # the row norms |a|^2, |b|^2
            reduce(ctx.b, f"{ctx.hint}_sq{k}", t, [t.rank - 1], False, Update.ADD, dtype,
                   value=lambda x, i: mul(x, x))
            for k, t in ((1, a), (2, c))
        )
        loops, idx = loop_vars("i", shape)
        d2 = sub(
            add(sq_a.at(idx[: nb + 1]), sq_c.at(idx[:nb] + idx[nb + 1 :])), mul(dot.at(idx), 2.0)
        )
        ctx.b.emit(loops, dot.base, idx, Update.ASSIGN, call(S.SQRT, call(S.MAX, d2, 0.0)))
        return dot
    loops, o = loop_vars("i", shape)
    red, r = loop_vars("r", (m,))
    out = ctx.b.temp(ctx.hint, shape, dtype)
    diff = call(S.ABS, sub(left(o, r), right(o, r)))
    if p == 0:
        value, update = cast(dtype, call(S.NE, left(o, r), right(o, r))), Update.ADD
    elif math.isinf(p):
        value, update = diff, Update.MAX
    elif p == 1:
        value, update = diff, Update.ADD
    else:
        value, update = call(S.POW, diff, float(p)), Update.ADD
    ctx.b.emit(loops, out.base, o, Update.ASSIGN, const(0.0))
    ctx.b.emit(loops + red, out.base, o, update, value)
    if p not in (0, 1) and not math.isinf(p):
        ctx.b.emit(loops, out.base, o, Update.ASSIGN, call(S.POW, out.at(o), 1.0 / float(p)))
    return out


__all__: list[str] = []
