"""Integer and weight-only quantised matmuls: `torch._int_mm` (int8 x int8 -> int32, a pure
contraction on int8 operands: what int8 tensor cores run) and `_weight_int8pack_mm` (activations
times an int8 weight [N, K] dequantised in the activations' dtype, then a per-channel scale: the
contraction's operands are the activation dtype and int8, whose values that dtype holds exactly,
so it is priced at the activation dtype's tensor-core rate; the weight's bytes are its int8 bytes).

The int4 forms (`_convert_weight_to_int4pack`, `_weight_int4pack_mm`) store the weight in a tiled
packed layout: they have no lowering (the CUDA ops do not run on a CPU build, so a lowering could
not be checked against them)."""

from __future__ import annotations

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import cast, contract, loop_vars, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


@lower(aten._int_mm.default)
def _int_mm(ctx: LowerCtx, a: View, b: View) -> View:
    if a.dtype != DType.I8 or b.dtype != DType.I8:
        raise SolarError(f"_int_mm takes int8 operands, got {a.dtype.text} and {b.dtype.text}")
    (m, k), n = a.shape, b.shape[1]
    out = ctx.dtype
    return contract(
        ctx.b,
        ctx.hint,
        (m, n),
        out,
        (k,),
        lambda o, r: cast(out, a.at((o[0], r[0]))),
        lambda o, r: cast(out, b.at((r[0], o[1]))),
    )


@lower(aten._weight_int8pack_mm.default)
def _weight_int8pack_mm(ctx: LowerCtx, x: View, w: View, scales: View) -> View:
    """out[m, n] = (sum_k x[m, k] * w[n, k]) * scales[n]."""
    if w.dtype != DType.I8:
        raise SolarError(f"_weight_int8pack_mm takes an int8 weight, got {w.dtype.text}")
    (m, k), n = x.shape, w.shape[0]
    dtype = ctx.dtype
    out = contract(
        ctx.b,
        ctx.hint,
        (m, n),
        dtype,
        (k,),
        lambda o, r: x.at((o[0], r[0])),
        lambda o, r: cast(dtype, w.at((o[1], r[0]))),
    )
    loops, idx = loop_vars("i", (m, n))
    scale = views.expand(scales, (m, n)).at(idx)
    ctx.b.emit(loops, out.base, idx, Update.ASSIGN, mul(out.at(idx), cast(dtype, scale)))
    return out


__all__: list[str] = []
