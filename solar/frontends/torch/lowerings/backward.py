"""Backward ops the decompositions leave in a joint (forward + backward) graph, lowered by structure:
convolution_backward as three guarded contractions (dX: dY convolved the other way with W, for
direct and transposed convolutions; dW: the correlation of X with dY; db: a sum of dY), each counting exactly the multiply-adds of the
forward convolution (padding and groups excluded); and attention in the form a joint trace on the
CPU gives (`_scaled_dot_product_flash_attention_for_cpu` and its backward).

Attention backward reads the forward's probabilities when the forward was lowered in the same
program (a saved-P implementation: four contractions dV, dP, dQ, dK, never a recomputed Q·Kᵀ, so the
count is a lower bound on recomputing and non-recomputing kernels alike); lowered on its own it
recomputes them from Q, K and the log-sum-exp. With is_causal each contraction runs over j <= i.
The products are priced as the forward SDPA lowering prices them (see `_priced`). Grouped-query
heads: query head h reads key head h // group; dK and dV sum over the group's query heads."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import torch

from solar.errors import UnsupportedOpError
from solar.frontends import views
from solar.frontends.builder import (
    add,
    call,
    cast,
    const,
    contract,
    copy,
    loop_vars,
    mul,
    reduce,
    sub,
)
from solar.frontends.torch.conv import per_dim, convolution
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.attention import scores
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, ge, lt
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

# Normalised attention probabilities of each forward lowered in a program: lse tensor -> (builder, P).
_PROBS: dict[str, tuple[Any, View]] = {}


def _sub_ctx(ctx: LowerCtx, k: int, hint: str) -> SimpleNamespace:
    shape, dtype = ctx.meta(k)
    return SimpleNamespace(b=ctx.b, shape=shape, dtype=dtype, hint=f"{ctx.hint}_{hint}")


# ---- convolution ---------------------------------------------------------------------------------


@lower(aten.convolution_backward.default)
def _convolution_backward(
    ctx: LowerCtx,
    dy: View,
    x: View,
    w: View,
    bias_sizes: Sequence[int] | None,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple[View | None, View | None, View | None]:
    nd = x.rank - 2
    stride, padding, dilation = (per_dim(v, nd) for v in (stride, padding, dilation))
    dx = dw = db = None
    if output_mask[0]:
        sub_ctx = _sub_ctx(ctx, 0, "dx")
        # dX is dY convolved the other way with W (transposed for a direct convolution, direct for
        # a transposed one; same groups, stride, padding, dilation): the guards keep exactly the
        # (output, tap) pairs the forward used.
        dx = convolution(sub_ctx, dy, w, None, stride, padding, dilation, not transposed, groups)
    if output_mask[1]:
        # dW[oc, ic, k] = Σ over n and output positions o of dY[n, oc, o] * X[n, c(oc, ic), o*s + k*d - p];
        # a transposed convolution's weight is [in, out / groups, kernel], its gradient the same
        # with X and dY swapped: dW[ic, oc, k] = Σ over n, i of X[n, ic, i] * dY[n, c(ic, oc), i*s + k*d - p]
        dense, windowed = (x, dy) if transposed else (dy, x)
        dw = _windowed_grad(
            _sub_ctx(ctx, 1, "dw"), dense, windowed, w.shape, dense.shape[1] // groups, w.shape[1],
            stride, padding, dilation,
        )
    if output_mask[2]:
        db = reduce(
            ctx.b, f"{ctx.hint}_db", dy, [0, *range(2, dy.rank)], False, Update.ADD, ctx.meta(2)[1]
        )
    return dx, dw, db


def _windowed_grad(
    ctx: SimpleNamespace,
    dense: View,
    windowed: View,
    shape: tuple[int, ...],
    dense_per_group: int,
    windowed_per_group: int,
    stride: list[int],
    padding: list[int],
    dilation: list[int],
) -> View:
    """A convolution weight gradient: out[a, b, k] = sum over n and the positions o of `dense` of
    dense[n, a, o] * windowed[n, (a // dense_per_group) * windowed_per_group + b, o*s + k*d - p],
    counted only where the window position is inside `windowed` (padding taps do no work). The
    direct form has dense = dY, windowed = X; the transposed form the other way round."""
    nd = dense.rank - 2
    spatial = windowed.shape[2:]

    def pos(o: tuple[Affine, ...], r: tuple[Affine, ...]) -> list[Affine]:
        return [r[1 + d] * stride[d] + o[2 + d] * dilation[d] - padding[d] for d in range(nd)]

    def dense_at(o, r):
        return dense.at((r[0], o[0], *r[1:]))

    def windowed_at(o, r):
        return windowed.at((r[0], (o[0] // dense_per_group) * windowed_per_group + o[1], *pos(o, r)))

    def guards(o, r):
        return [g for d, p in enumerate(pos(o, r)) for g in (ge(p, 0), lt(p, spatial[d]))]

    reduced = (dense.shape[0], *dense.shape[2:])
    return contract(ctx.b, ctx.hint, shape, ctx.dtype, reduced, dense_at, windowed_at, guards=guards)


# ---- attention (the CPU flash form of a joint trace) ---------------------------------------------


def _acc(dtype: DType) -> DType:
    return DType.F32 if dtype.is_float and dtype.bits < 32 else dtype


def _priced(ctx: LowerCtx, dtype: DType) -> Any:
    """Price the attention products as the fastest real kernels run them (the forward SDPA
    lowering's rule, lowerings/attention.py): fp32 attention may use TF32 tensor cores (the
    memory-efficient kernels' 3xTF32, forward and backward); for fp16/bf16 inputs P and dS enter
    their products in the input dtype (FlashAttention rounds them before each GEMM). Returns the
    operand cast for P and dS."""
    if dtype is DType.F32 and ctx.b.origin is not None:
        ctx.b.origin = replace(ctx.b.origin, allow_tf32=True)
    if dtype in (DType.F16, DType.BF16):
        return lambda t: cast(dtype, t)
    return lambda t: t


def _check_attention(q: View, k: View, attn_mask: Any, dropout_p: float) -> None:
    if dropout_p:
        raise UnsupportedOpError(
            f"attention with dropout_p={dropout_p} draws random numbers; train with dropout_p=0"
        )
    _group(q, k)


def _group(q: View, k: View) -> int:
    """Query heads per key head (grouped-query attention; 1 when the heads match)."""
    if k.shape[:-2] == q.shape[:-2]:
        return 1
    if (
        q.rank >= 3
        and k.rank == q.rank
        and k.shape[:-3] == q.shape[:-3]
        and q.shape[-3] % k.shape[-3] == 0
    ):
        return q.shape[-3] // k.shape[-3]
    raise UnsupportedOpError(
        f"attention with query batch {q.shape[:-2]} and key batch {k.shape[:-2]}"
    )


def _by_query_head(x: View, q: View) -> View:
    """Keys or values indexed by the query's heads: query head h reads key head h // group."""
    group = _group(q, x)
    if group == 1:
        return x
    return View(
        q.shape[:-2] + x.shape[-2:],
        x.dtype,
        lambda idx: x.at(idx[:-3] + (idx[-3] // group,) + idx[-2:]),
    )


def _logits(s: Any, mask: View | None, idx: tuple, scale: float) -> Any:
    """scale * s, plus an additive mask, or -inf where a boolean mask excludes the key."""
    scaled = mul(s, scale)
    if mask is None:
        return scaled
    if mask.dtype is DType.BOOL:
        return call(S.WHERE, mask.at(idx), scaled, -math.inf)
    return add(scaled, mask.at(idx))


def _mask(attn_mask: View | None, shape: tuple[int, ...]) -> View | None:
    return None if attn_mask is None else views.expand(attn_mask, shape)


def _causal(is_causal: bool):
    return (lambda i, j: [ge(i, j)]) if is_causal else (lambda i, j: [])


@lower(aten._scaled_dot_product_flash_attention_for_cpu.default)
def _flash_forward(
    ctx: LowerCtx,
    q: View,
    k: View,
    v: View,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    attn_mask: View | None = None,
    scale: float | None = None,
) -> tuple[View, View]:
    _check_attention(q, k, attn_mask, dropout_p)
    k, v = _by_query_head(k, q), _by_query_head(v, q)
    b = ctx.b
    low = _priced(ctx, q.dtype)
    *batch_l, length, e_dim = q.shape
    batch = tuple(batch_l)
    keys = k.shape[-2]
    out_shape, out_dtype = ctx.meta(0)
    acc = _acc(out_dtype)
    scale = 1.0 / math.sqrt(e_dim) if scale is None else float(scale)
    causal = _causal(is_causal)
    sshape = batch + (length, keys)
    mask = _mask(attn_mask, sshape)
    loops, idx = loop_vars("i", sshape)
    rows, ridx = loops[:-1], idx[:-1]
    guards = causal(idx[-2], idx[-1])
    s = scores(b, ctx.hint, q, k, sshape, acc, causal)
    # The row maximum of the logits; with a positive scale and no mask, of the raw scores (the
    # scale is folded into the exponent: the max of scaled scores is the scaled max).
    plain = mask is None and scale > 0
    logit = s.at(idx) if plain else _logits(s.at(idx), mask, idx, scale)
    m = b.temp(f"{ctx.hint}_max", batch + (length,), acc)
    b.emit(rows, m.base, ridx, Update.ASSIGN, const(-math.inf))
    b.emit(loops, m.base, ridx, Update.MAX, logit, guards)
    p = b.temp(f"{ctx.hint}_probs", sshape, acc)
    centred = sub(logit, m.at(ridx))
    b.emit(
        loops,
        p.base,
        idx,
        Update.ASSIGN,
        call(S.EXP, mul(centred, scale) if plain else centred),
        guards,
    )
    total = b.temp(f"{ctx.hint}_sum", batch + (length,), acc)
    b.emit(rows, total.base, ridx, Update.ASSIGN, const(0.0))
    b.emit(loops, total.base, ridx, Update.ADD, p.at(idx), guards)
    lse_shape, lse_dtype = ctx.meta(1)
    lse = b.temp(f"{ctx.hint}_lse", lse_shape, lse_dtype)
    top = mul(m.at(ridx), scale) if plain else m.at(ridx)
    b.emit(rows, lse.base, ridx, Update.ASSIGN, add(top, call(S.LOG, total.at(ridx))))
    # Normalised probabilities, kept for the backward (P = p / sum).
    pn = b.temp(f"{ctx.hint}_P", sshape, acc)
    b.emit(
        loops, pn.base, idx, Update.ASSIGN, mul(p.at(idx), call(S.RECIP, total.at(ridx))), guards
    )
    o = contract(
        b,
        f"{ctx.hint}_out",
        out_shape,
        acc,
        (keys,),
        lambda o_, r: low(pn.at(o_[:-1] + (r[0],))),
        lambda o_, r: v.at(o_[:-2] + (r[0], o_[-1])),
        guards=lambda o_, r: causal(o_[-2], r[0]),
    )
    _PROBS[lse.base] = (b, pn)
    return _cast_to(b, o, out_dtype, f"{ctx.hint}_o"), lse


def _cast_to(b: Any, x: View, dtype: DType, hint: str) -> View:
    return x if x.dtype is dtype else copy(b, hint, x, dtype)


def _probabilities(
    ctx: LowerCtx,
    q: View,
    k: View,
    lse: View,
    scale: float,
    causal,
    acc: DType,
    attn_mask: View | None,
) -> View:
    """The forward's P when it was lowered in this program, else P = exp(scale * Q·Kᵀ - lse)."""
    saved = _PROBS.get(lse.base) if lse.base else None
    if saved is not None and saved[0] is ctx.b:
        return saved[1]
    b = ctx.b
    *batch, length, _ = q.shape
    sshape = tuple(batch) + (length, k.shape[-2])
    s = scores(b, ctx.hint, q, k, sshape, acc, causal)
    loops, idx = loop_vars("i", sshape)
    p = b.temp(f"{ctx.hint}_P", sshape, acc)
    value = call(
        S.EXP, sub(_logits(s.at(idx), _mask(attn_mask, sshape), idx, scale), lse.at(idx[:-1]))
    )
    b.emit(loops, p.base, idx, Update.ASSIGN, value, causal(idx[-2], idx[-1]))
    return p


@lower(aten._scaled_dot_product_flash_attention_for_cpu_backward.default)
def _flash_backward(
    ctx: LowerCtx,
    do: View,
    q: View,
    k: View,
    v: View,
    out: View,
    lse: View,
    dropout_p: float,
    is_causal: bool,
    *,
    attn_mask: View | None = None,
    scale: float | None = None,
) -> tuple[View, View, View]:
    _check_attention(q, k, attn_mask, dropout_p)
    b = ctx.b
    low = _priced(ctx, q.dtype)
    *batch_l, length, e_dim = q.shape
    batch = tuple(batch_l)
    keys, ev = k.shape[-2], v.shape[-1]
    acc = _acc(ctx.meta(0)[1])
    scale = 1.0 / math.sqrt(e_dim) if scale is None else float(scale)
    causal = _causal(is_causal)
    group = _group(q, k)
    kq, vq = _by_query_head(k, q), _by_query_head(v, q)
    p = _probabilities(ctx, q, kq, lse, scale, causal, acc, attn_mask)

    def by_key(o: tuple, r: tuple) -> tuple[tuple, Any]:
        """(query batch prefix, query position) of reduction point r for a key-shaped output o:
        with grouped heads r runs over (head in group, query position)."""
        if group == 1:
            return o[:-2], r[0]
        return o[:-3] + (o[-3] * group + r[0],), r[1]

    red = (length,) if group == 1 else (group, length)
    sshape = batch + (length, keys)
    loops, idx = loop_vars("i", sshape)
    ridx = idx[:-1]
    guards = causal(idx[-2], idx[-1])
    # D_i = sum_e dO[i, e] * O[i, e]  (= sum_j P_ij dP_ij)
    d = contract(
        b,
        f"{ctx.hint}_D",
        batch + (length,),
        acc,
        (ev,),
        lambda o, r: do.at(o + (r[0],)),
        lambda o, r: out.at(o + (r[0],)),
    )

    def key_grad(name: str, shape: tuple, a: View, x: View) -> View:
        """out[..., key, e] = Σ over the queries q of low(a[..., q, key]) * x[..., q, e]."""
        return contract(
            b,
            f"{ctx.hint}_{name}",
            shape,
            acc,
            red,
            lambda o, r: low(a.at(by_key(o, r)[0] + (by_key(o, r)[1], o[-2]))),
            lambda o, r: x.at(by_key(o, r)[0] + (by_key(o, r)[1], o[-1])),
            guards=lambda o, r: causal(by_key(o, r)[1], o[-2]),
        )

    dv = key_grad("dv", v.shape, p, do)
    dp = scores(b, ctx.hint, do, vq, sshape, acc, causal, "dp")  # dP = dO · Vᵀ
    # dS = scale * P * (dP - D): the gradient with respect to the unscaled scores Q·Kᵀ.
    b.emit(
        loops,
        dp.base,
        idx,
        Update.ASSIGN,
        mul(mul(p.at(idx), sub(dp.at(idx), d.at(ridx))), scale),
        guards,
    )
    dq = contract(
        b,
        f"{ctx.hint}_dq",
        batch + (length, e_dim),
        acc,
        (keys,),
        lambda o, r: low(dp.at(o[:-1] + (r[0],))),
        lambda o, r: kq.at(o[:-2] + (r[0], o[-1])),
        guards=lambda o, r: causal(o[-2], r[0]),
    )
    dk = key_grad("dk", k.shape, dp, q)
    return tuple(
        _cast_to(b, g, ctx.meta(n)[1], f"{ctx.hint}_{name}_out")  # type: ignore[return-value]
        for n, (g, name) in enumerate(((dq, "dq"), (dk, "dk"), (dv, "dv")))
    )


__all__ = ["_PROBS"]
