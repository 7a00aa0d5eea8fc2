"""Scaled dot-product attention, lowered whole (kept out of the decomposition, see PRESERVE): two
contractions around a softmax, every statement over the attended positions only. With is_causal
the key index j runs over j <= i, so each head counts exactly L(L+1)/2 scores (L = S) in both
contractions and in the softmax; a boolean or additive mask is applied where it is (a mask built
from positions, e.g. tril, becomes guards through the structure pass).

Scale: for a positive scale and no additive mask the scale is folded into the exponent,
exp((s - max s) * scale) — max of scaled scores is the scaled max — so scores are never scaled on
their own. Fully masked rows give 0, as PyTorch does (a per-row check, never per score).

Pricing (docs/BOUNDS.md §2, "fused ops"): the two products are priced at the precision the most
capable real SDPA kernel uses, stated here, not left to the decomposition. Half-precision inputs:
both Q·Kᵀ and P·V on the input dtype's tensor cores — FlashAttention-2/3, cuDNN and the
memory-efficient kernel round P to fp16/bf16 before P·V — so P enters P·V through a cast to the
input dtype (scores and row statistics stay fp32, as those kernels keep them). fp32 inputs: both
products may use TF32 tensor cores whatever the matmul flag says, because PyTorch's
memory-efficient backend runs fp32 attention as 3xTF32 on tensor cores on sm80+
(mem_eff_attention/gemm_kernel_utils.h, OpMultiplyAddFastF32); one TF32 pass is a lower bound."""

from __future__ import annotations

import math

import torch

from dataclasses import replace

from solar.errors import UnsupportedOpError
from solar.frontends import views
from solar.frontends.builder import add, call, cast, const, contract, loop_vars, mul, sub
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, ge
from solar.ir.dtypes import DType
from solar.ir.nodes import Origin
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

PRESERVE = frozenset({aten.scaled_dot_product_attention.default})
NEG_INF = -math.inf


def _accumulator(dtype: DType) -> DType:
    """Scores and row statistics of half-precision attention are kept in f32 (as fused kernels
    do)."""
    return DType.F32 if dtype.is_float and dtype.bits < 32 else dtype


def _product_dtype(dtype: DType) -> DType:
    """The dtype P enters P·V in: the input dtype for fp16/bf16 inputs (FlashAttention and cuDNN
    run P·V on half-precision tensor cores), else the accumulator's."""
    return dtype if dtype in (DType.F16, DType.BF16) else _accumulator(dtype)


def _keys(x: View, batch: tuple[int, ...], heads_q: int, gqa: bool) -> View:
    """`x` (keys or values) indexed by the query's batch index: broadcast, or with grouped-query
    attention, query head h reads key head h // (heads of q / heads of k)."""
    tail = x.shape[-2:]
    if not gqa or x.shape[-3] == heads_q:
        return views.expand(x, batch + tail)
    group = heads_q // x.shape[-3]

    def at(idx):
        return x.at(idx[:-3] + (idx[-3] // group,) + idx[-2:])

    inner = View(x.shape[:-3] + (heads_q,) + tail, x.dtype, at)
    return views.expand(inner, batch + tail)


def scores(
    b, hint: str, q: View, k: View, shape: tuple[int, ...], acc: DType, causal, name: str = "scores"
) -> View:
    """S[..., i, j] = Σ_e Q[..., i, e] K[..., j, e] in `acc`, over the pairs `causal(i, j)` allows
    (the first product of every attention lowering, forward and backward, and dP = dO · Vᵀ)."""
    return contract(
        b,
        f"{hint}_{name}",
        shape,
        acc,
        (q.shape[-1],),
        lambda o, r: q.at(o[:-1] + (r[0],)),
        lambda o, r: k.at(o[:-2] + (o[-1], r[0])),
        guards=lambda o, r: causal(o[-2], o[-1]),
    )


@lower(aten.scaled_dot_product_attention.default)
def _sdpa(
    ctx: LowerCtx,
    q: View,
    k: View,
    v: View,
    attn_mask: View | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> View:
    if dropout_p:
        raise UnsupportedOpError(
            f"scaled_dot_product_attention with dropout_p={dropout_p} draws random numbers; "
            "analyse the model in eval mode (--mode eval) or with dropout_p=0"
        )
    b = ctx.b
    if ctx.dtype is DType.F32:  # the efficient kernel's 3xTF32: see the module docstring
        b.origin = replace(b.origin or Origin(str(ctx.node.name), 0), allow_tf32=True)
    *batch_list, length, e_dim = q.shape
    batch = tuple(batch_list)
    keys, ev = k.shape[-2], v.shape[-1]
    acc = _accumulator(ctx.dtype)
    scale = 1.0 / math.sqrt(e_dim) if scale is None else float(scale)
    heads = batch[-1] if batch else 1
    kk, vv = (_keys(x, batch, heads, enable_gqa) for x in (k, v))
    scores_shape = batch + (length, keys)
    loops, idx = loop_vars("i", scores_shape)
    rows, row_idx = loops[:-1], idx[:-1]
    i, j = idx[-2], idx[-1]

    def causal(qi: Affine, kj: Affine) -> list:
        return [ge(qi, kj)] if is_causal else []

    s = scores(b, ctx.hint, q, kk, scores_shape, acc, causal)
    guards = causal(i, j)
    additive = attn_mask is not None and attn_mask.dtype is not DType.BOOL
    mask = None if attn_mask is None else views.expand(attn_mask, scores_shape).at(idx)
    if additive:
        b.emit(loops, s.base, idx, Update.ASSIGN, add(mul(s.at(idx), scale), mask), guards)
        scale = 1.0
    elif scale <= 0:
        b.emit(loops, s.base, idx, Update.ASSIGN, mul(s.at(idx), scale), guards)
        scale = 1.0
    logits = s.at(idx)
    if mask is not None and not additive:
        logits = call(S.WHERE, mask, logits, NEG_INF)

    m = b.temp(f"{ctx.hint}_max", batch + (length,), acc)
    b.emit(rows, m.base, row_idx, Update.ASSIGN, const(NEG_INF))
    b.emit(loops, m.base, row_idx, Update.MAX, logits, guards)
    if mask is not None:  # a fully masked row: exp(-inf - 0) = 0 below, not NaN
        m_at = m.at(row_idx)
        b.emit(
            rows,
            m.base,
            row_idx,
            Update.ASSIGN,
            call(S.WHERE, call(S.EQ, m_at, NEG_INF), 0.0, m_at),
        )

    p = b.temp(f"{ctx.hint}_probs", scores_shape, acc)
    centred = sub(s.at(idx), m.at(row_idx))
    value = call(S.EXP, centred if scale == 1.0 else mul(centred, scale))
    if mask is not None and not additive:
        value = call(S.WHERE, mask, value, 0.0)
    b.emit(loops, p.base, idx, Update.ASSIGN, value, guards)

    total = b.temp(f"{ctx.hint}_sum", batch + (length,), acc)
    b.emit(rows, total.base, row_idx, Update.ASSIGN, const(0.0))
    b.emit(loops, total.base, row_idx, Update.ADD, p.at(idx), guards)
    t_at = total.at(row_idx)
    inverse = call(S.RECIP, t_at)
    if mask is not None:  # a fully masked row sums to 0 and gives 0
        inverse = call(S.WHERE, call(S.EQ, t_at, 0.0), 0.0, inverse)
    b.emit(rows, total.base, row_idx, Update.ASSIGN, inverse)

    out_shape = batch + (length, ev)
    p_dtype = _product_dtype(ctx.dtype)

    def p_operand(t):
        return t if p_dtype is acc else cast(p_dtype, t)

    o = contract(
        b,
        f"{ctx.hint}_acc" if acc is not ctx.dtype else ctx.hint,
        out_shape,
        acc,
        (keys,),
        lambda o_, r: p_operand(p.at(o_[:-1] + (r[0],))),
        lambda o_, r: vv.at(o_[:-2] + (r[0], o_[-1])),
        guards=lambda o_, r: causal(o_[-2], r[0]),
    )
    o_loops, o_idx = loop_vars("i", out_shape)
    normalised = mul(o.at(o_idx), total.at(o_idx[:-1]))
    if acc is ctx.dtype:
        b.emit(o_loops, o.base, o_idx, Update.ASSIGN, normalised)
        return o
    out = b.temp(ctx.hint, out_shape, ctx.dtype)
    b.emit(o_loops, out.base, o_idx, Update.ASSIGN, cast(ctx.dtype, normalised))
    return out


__all__ = ["PRESERVE"]
