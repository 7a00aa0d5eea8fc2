"""Ops the loss functions decompose into that no other family provides. mse, l1, smooth_l1,
huber, hinge_embedding, margin_ranking, soft_margin, poisson_nll, bce, bce_with_logits and the
cosine losses decompose into elementwise ops, reductions and vector norms; kl_div also needs
isnan (its decomposition zeroes NaN terms), label-smoothed cross entropy a boolean not.
cross_entropy, nll_loss and multi_margin_loss gather the target class (aten.gather, in
indexing.py).
hinge_embedding_loss and cosine_embedding_loss are lowered whole (see PRESERVE)."""

from __future__ import annotations

import torch

from solar.frontends import views
from solar.frontends.builder import Term, add, call, div, elementwise, mul, reduce, require, sub
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.reductions import in_place
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten


@lower(aten.isnan.default)
def _isnan(ctx: LowerCtx, x: View) -> View:
    """NaN is the only value unequal to itself: one compare."""
    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, [x], lambda t: call(S.NE, t, t))


@lower(aten.bitwise_not.default)
def _bitwise_not(ctx: LowerCtx, x: View) -> View:
    """Of booleans only (a logical not); integer bit flips are not supported."""
    require(x.dtype == DType.BOOL, f"bitwise_not of {x.dtype.text} tensors is not supported yet")
    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, [x], lambda t: call(S.NOT, t))


# Ops the loader should keep whole: their decompositions build a tensor of ones from
# aten.empty_permuted, whose values are unspecified (nothing to compare a lowering with).
PRESERVE = frozenset({aten.hinge_embedding_loss.default, aten.cosine_embedding_loss.default})

# PyTorch's reduction enum (at::Reduction): none, mean, sum.
REDUCTIONS = {0: None, 1: "mean", 2: "sum"}
EPSILON = 1e-12  # cosine_embedding_loss's guard against zero norms


def reduce_loss(ctx: LowerCtx, loss: View, reduction: int) -> View:
    """Apply a loss reduction to per-element losses."""
    how = REDUCTIONS[reduction]
    if how is None:
        return loss
    total = reduce(
        ctx.b, f"{ctx.hint}_sum", loss, list(range(loss.rank)), False, Update.ADD, ctx.dtype
    )
    return (
        in_place(ctx, total, lambda t: mul(t, 1.0 / max(loss.numel, 1))) if how == "mean" else total
    )


@lower(aten.hinge_embedding_loss.default)
def _hinge_embedding(
    ctx: LowerCtx, x: View, target: View, margin: float = 1.0, reduction: int = 1
) -> View:
    """x where target != -1, plus max(margin - x, 0) where target != 1 (PyTorch's definition)."""

    def fn(t: Term, y: Term) -> Term:
        hinge = call(S.WHERE, call(S.NE, y, 1), call(S.MAX, sub(margin, t), 0.0), 0.0)
        return add(hinge, call(S.WHERE, call(S.NE, y, -1), t, 0.0))

    shape = views.broadcast_shape(x.shape, target.shape)
    loss = elementwise(ctx.b, f"{ctx.hint}_loss", shape, ctx.dtype, [x, target], fn)
    return reduce_loss(ctx, loss, reduction)


@lower(aten.cosine_embedding_loss.default)
def _cosine_embedding(
    ctx: LowerCtx, a: View, c: View, target: View, margin: float = 0.0, reduction: int = 1
) -> View:
    """cos = Σab / sqrt((Σa² + ε)(Σc² + ε)) per row; 1 - cos where target = 1, max(cos - margin,
    0) where target = -1 (PyTorch's definition, ε = 1e-12)."""
    b, dtype = ctx.b, ctx.dtype
    dim = a.rank - 1
    shape = views.broadcast_shape(a.shape, c.shape)
    a, c = views.expand(a, shape), views.expand(c, shape)

    def sums(u: View, w: View, hint: str) -> View:
        return reduce(
            b,
            f"{ctx.hint}_{hint}",
            u,
            [dim],
            False,
            Update.ADD,
            dtype,
            value=lambda t, i: mul(t, w.at(i)),
        )

    dot, sq_a, sq_c = sums(a, c, "dot"), sums(a, a, "sq_a"), sums(c, c, "sq_c")

    def fn(d: Term, p: Term, q: Term, y: Term) -> Term:
        cos = div(d, call(S.SQRT, mul(add(p, EPSILON), add(q, EPSILON))))
        pos = call(S.WHERE, call(S.EQ, y, 1), sub(1.0, cos), 0.0)
        return add(pos, call(S.WHERE, call(S.EQ, y, -1), call(S.MAX, sub(cos, margin), 0.0), 0.0))

    loss = elementwise(b, f"{ctx.hint}_loss", dot.shape, dtype, [dot, sq_a, sq_c, target], fn)
    return reduce_loss(ctx, loss, reduction)
