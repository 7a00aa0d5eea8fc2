"""Scaled low-precision matmuls (fp8 GEMMs): aten._scaled_mm is a pure two-operand contraction in the
operands' dtype (what fp8 tensor cores run) followed by an epilogue applying the scales and bias."""

from __future__ import annotations

from typing import Any

import torch

from solar.frontends import views
from solar.frontends.builder import add, contract, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


@lower(aten._scaled_mm.default)
def _scaled_mm(
    ctx: LowerCtx, a: View, b: View, scale_a: View, scale_b: View, bias: View | None = None,
    scale_result: View | None = None, out_dtype: Any = None, use_fast_accum: bool = False,
) -> View:
    (m, k), n = a.shape, b.shape[1]
    shape = (m, n)
    out = contract(
        ctx.b, ctx.hint, shape, ctx.dtype, (k,),
        lambda o, r: a.at((o[0], r[0])), lambda o, r: b.at((r[0], o[1])),
    )
    loops, idx = loop_vars("i", shape)
    value = mul(mul(out.at(idx), views.expand(scale_a, shape).at(idx)), views.expand(scale_b, shape).at(idx))
    if bias is not None:
        value = add(value, views.expand(bias, shape).at(idx))
    ctx.b.emit(loops, out.base, idx, Update.ASSIGN, value)
    return out
