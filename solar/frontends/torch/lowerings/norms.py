"""Batch norm (training: statistics of the batch, running-statistic updates as outputs; eval:
running statistics), instance norm (PyTorch runs it as a batch norm over N·C channels) and group
norm. Statistics take one pass of Σx and Σx² per channel or group (an add and a multiply-add per
element); the affine transform is folded per channel into y = x·scale + shift, the cheapest exact
evaluation (one multiply-add per element). RMS norm and layer norm come from core ATen
decompositions and core.py.

While tracing, the loader routes `F.batch_norm` to the custom op `solar::batch_norm`
(REDIRECT_DIRECT), which export keeps as one node and the direct lowering rewrites exactly as it
rewrites `aten.batch_norm`: torch's fake implementation of batch norm runs its Python
decomposition (~25 ops through the fake-tensor mode, ~50 ms on first sight of a shape: DenseNet's
~200 distinct shapes), solar's only computes the output's shape, dtype and strides."""

from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from solar.frontends import views
from solar.frontends.builder import Term, add, call, elementwise, mul, require, sub
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.reductions import moments
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S

aten = torch.ops.aten

PRESERVE = frozenset({aten.group_norm.default})


# ---- the custom op the loader routes F.batch_norm to while tracing --------------------------------


@torch.library.custom_op("solar::batch_norm", mutates_args=("running_mean", "running_var"))
def batch_norm(
    input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
    weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
    momentum: float = 0.1, eps: float = 1e-5,
) -> Tensor:
    """F.batch_norm, with its signature (the running statistics updated in place when training)."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


@batch_norm.register_fake
def _batch_norm_fake(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:  # F.batch_norm's own check, before torch.batch_norm
        per_channel = input.shape[0] * math.prod(input.shape[2:]) if input.dim() >= 2 else 0
        if per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.size()}")
    value = batch_norm_value(input, training)
    if value is not None:
        return value[0]
    c = input.shape[1]  # any other layout: torch's own decomposition decides (never seen in practice)
    mean = input.new_zeros(c) if running_mean is None else running_mean
    var = input.new_ones(c) if running_var is None else running_var
    return aten._native_batch_norm_legit_no_training(input, weight, bias, mean, var, momentum, eps)[0]


def batch_norm_value(x: Tensor, training: bool) -> tuple | None:
    """The value of _native_batch_norm_legit_functional (training) or _no_training (eval) of a
    dense `x`, made in the current (fake) mode as torch's decomposition computes it but without
    running it (~25 fake ops): the output like `x` (an elementwise result keeps a dense layout),
    the saved statistics per channel in x's dtype (empty in eval), the new running statistics in
    x's computation dtype (float32 for 16-bit `x`). None for any other `x` (the op decides).
    Checked against the op in tests/frontends/test_direct_lowering.py."""
    if not torch._prims_common.is_non_overlapping_and_dense_or_false(x):
        return None
    c = x.shape[1] if training else 0
    opmath = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    saved = [torch.empty((c,), dtype=x.dtype, device=x.device) for _ in range(2)]
    running = [torch.empty((c,), dtype=opmath, device=x.device) for _ in range(2)] if training else []
    return (torch.empty_like(x), *saved, *running)


# torch function -> custom op (when the argument count matches: BatchNorm modules pass all eight),
# for the direct lowering only: run_decompositions would functionalize the mutating op into an
# auto_functionalized node, so the loader traces again without these where the direct path refuses.
REDIRECT_DIRECT = {F.batch_norm: torch.ops.solar.batch_norm.default}


def _rstd(ctx: LowerCtx, var: View, eps: float) -> View:
    return elementwise(
        ctx.b, f"{ctx.hint}_rstd", var.shape, var.dtype, [var], lambda v: call(S.RSQRT, add(v, eps))
    )


def _normalise(
    ctx: LowerCtx,
    x: View,
    mean: View,
    rstd: View,
    weight: View | None,
    bias: View | None,
    shape: tuple[int, ...],
    dtype: DType,
) -> View:
    """y = x·scale + shift with scale = weight·rstd and shift = bias - mean·scale computed once per
    entry of `shape` (the statistics' shape, broadcastable against x): one multiply-add per
    element of x."""
    b, stat_dtype = ctx.b, rstd.dtype
    affine_w = [weight] if weight is not None else []
    scale = elementwise(
        b,
        f"{ctx.hint}_scale",
        shape,
        stat_dtype,
        [rstd, *affine_w],
        lambda r, *w: mul(r, w[0]) if w else r,
    )

    def shift_of(m: Term, sc: Term, *bias_t: Term) -> Term:
        return sub(bias_t[0], mul(m, sc)) if bias_t else call(S.NEG, mul(m, sc))

    affine_b = [bias] if bias is not None else []
    shift = elementwise(
        b, f"{ctx.hint}_shift", shape, stat_dtype, [mean, scale, *affine_b], shift_of
    )
    return elementwise(
        b, ctx.hint, x.shape, dtype, [x, scale, shift], lambda t, sc, h: add(mul(t, sc), h)
    )


def _channels(v: View | None, rank: int) -> View | None:
    """A per-channel (C,) vector as (C, 1, ..., 1), broadcastable against (N, C, *spatial)."""
    return None if v is None else views.reshape(v, (v.shape[0],) + (1,) * (rank - 2))


def _per_channel(
    ctx: LowerCtx, x: View, mean: View, rstd: View, weight: View | None, bias: View | None
) -> View:
    """Batch-norm normalisation with per-channel (C,) statistics."""
    r = x.rank
    shape = (x.shape[1],) + (1,) * (r - 2)
    parts = [_channels(v, r) for v in (mean, rstd, weight, bias)]
    return _normalise(ctx, x, *parts, shape, ctx.meta(0)[1])


def _train(
    ctx: LowerCtx, x: View, weight: View | None, bias: View | None, eps: float
) -> tuple[View, View, View, int, View]:
    """y, and the per-channel statistics over (N, *spatial) in shape (C,): mean, rstd, the number
    of elements per channel and the biased variance."""
    dims = [d for d in range(x.rank) if d != 1]
    mean, var = moments(ctx, x, dims, False, 0.0, ctx.meta(1)[1])
    rstd = _rstd(ctx, var, eps)
    y = _per_channel(ctx, x, mean, rstd, weight, bias)
    return y, mean, rstd, math.prod(x.shape[d] for d in dims), var


def _running(ctx: LowerCtx, old: View, new: View, momentum: float, hint: str) -> View:
    """(1 - momentum)·old + momentum·new."""
    return elementwise(
        ctx.b,
        hint,
        old.shape,
        old.dtype,
        [old, new],
        lambda o, s: add(mul(o, 1.0 - momentum), mul(s, momentum)),
    )


@lower(aten._native_batch_norm_legit_functional.default)
def _batch_norm_functional(
    ctx: LowerCtx,
    x: View,
    weight: View | None,
    bias: View | None,
    running_mean: View,
    running_var: View,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[View, View, View, View, View]:
    require(
        training,
        "batch norm with running statistics outside training is traced as "
        "_native_batch_norm_legit_no_training; this form is not supported",
    )
    y, mean, rstd, n, var = _train(ctx, x, weight, bias, eps)
    new_mean = _running(ctx, running_mean, mean, momentum, f"{ctx.hint}_running_mean")
    unbiased = n / (n - 1) if n > 1 else math.inf
    new_var = elementwise(
        ctx.b,
        f"{ctx.hint}_running_var",
        running_var.shape,
        running_var.dtype,
        [running_var, var],
        lambda o, v: add(mul(o, 1.0 - momentum), mul(v, momentum * unbiased)),
    )
    return y, mean, rstd, new_mean, new_var


@lower(aten._native_batch_norm_legit.no_stats)
def _batch_norm_no_stats(
    ctx: LowerCtx,
    x: View,
    weight: View | None,
    bias: View | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[View, View, View]:
    y, mean, rstd, _, _ = _train(ctx, x, weight, bias, eps)
    return y, mean, rstd


@lower(aten._native_batch_norm_legit_no_training.default)
def _batch_norm_eval(
    ctx: LowerCtx,
    x: View,
    weight: View | None,
    bias: View | None,
    running_mean: View,
    running_var: View,
    momentum: float,
    eps: float,
) -> tuple[View | None, ...]:
    y = _per_channel(ctx, x, running_mean, _rstd(ctx, running_var, eps), weight, bias)
    return y, None, None  # the statistics outputs are empty in eval mode


def group_norm(
    ctx: LowerCtx,
    x: View,
    weight: View | None,
    bias: View | None,
    groups: int,
    eps: float,
    y_dtype: DType,
    stat_dtype: DType,
) -> tuple[View, View, View]:
    """y, mean and rstd (N, G): statistics per (sample, group) over C/G channels × spatial; scale
    and shift per (sample, channel), then one multiply-add per element."""
    n, c = x.shape[0], x.shape[1]
    per_group = c // groups
    grouped = views.reshape(x, (n, groups, x.numel // (n * groups)))
    mean, var = moments(ctx, grouped, [2], False, 0.0, stat_dtype)
    rstd = _rstd(ctx, var, eps)

    def per_channel(v: View) -> View:  # (N, G) -> (N, C, 1, ...)
        wide = views.reshape(views.expand(views.unsqueeze(v, 2), (n, groups, per_group)), (n, c))
        return views.reshape(wide, (n, c) + (1,) * (x.rank - 2))

    shape = (n, c) + (1,) * (x.rank - 2)
    affine = [_channels(weight, x.rank), _channels(bias, x.rank)]
    y = _normalise(ctx, x, per_channel(mean), per_channel(rstd), *affine, shape, y_dtype)
    return y, mean, rstd


@lower(aten.native_group_norm.default)
def _native_group_norm(
    ctx: LowerCtx,
    x: View,
    weight: View | None,
    bias: View | None,
    n: int,
    c: int,
    hxw: int,
    groups: int,
    eps: float,
) -> tuple[View, View, View]:
    return group_norm(ctx, x, weight, bias, groups, eps, ctx.meta(0)[1], ctx.meta(1)[1])


@lower(aten.group_norm.default)
def _group_norm(
    ctx: LowerCtx,
    x: View,
    groups: int,
    weight: View | None = None,
    bias: View | None = None,
    eps: float = 1e-5,
    cudnn_enabled: bool = True,
) -> View:
    """Kept whole (PRESERVE): its arguments carry no sizes of their own, so a reduced-size check
    shrinks it consistently, which native_group_norm's (N, C, HxW) arguments prevent."""
    stat_dtype = DType.F32 if x.dtype in (DType.F16, DType.BF16) else x.dtype
    return group_norm(ctx, x, weight, bias, groups, eps, ctx.dtype, stat_dtype)[0]


__all__ = ["PRESERVE", "REDIRECT_DIRECT", "batch_norm", "group_norm"]
