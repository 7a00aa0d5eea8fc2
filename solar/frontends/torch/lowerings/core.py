"""Core lowerings: elementwise ops, views, creation, softmax, layer norm, matmuls and convolution
(reductions: reductions.py). Rules are a few lines each because the shared builders (elementwise, reduce, contract,
the view algebra) do the work. Rules receive views for tensor arguments and Python values for the
rest, and return a view (or a tuple/list of views for multi-output ops)."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import (
    Term,
    add,
    call,
    cast,
    const,
    contract,
    div,
    elementwise,
    loop_vars,
    mul,
    reduce,
    sub,
)
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.conv import convolution
from solar.frontends.torch.lowerings.reductions import scale_in_place
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.nodes import Cast, Index
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

from solar.frontends.torch.lowerings.registry import Rule, lower

aten = torch.ops.aten


# ---- elementwise ---------------------------------------------------------------------------------

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu(x: Term, approximate: str = "none") -> Term:
    if approximate == "tanh":
        inner = mul(add(x, mul(mul(mul(x, x), x), 0.044715)), SQRT_2_OVER_PI)
        return mul(mul(x, 0.5), add(call(S.TANH, inner), 1.0))
    return mul(mul(x, 0.5), add(call(S.ERF, mul(x, 1.0 / math.sqrt(2.0))), 1.0))


def _pow(x: Term, e: Any) -> Term:
    """x ** e with small integer and half exponents expanded (the cheapest exact evaluation)."""
    if isinstance(e, (int, float)) and float(e).is_integer() and 1 <= e <= 4:
        out = x
        for _ in range(int(e) - 1):
            out = mul(out, x)
        return out
    special = {0.5: lambda: call(S.SQRT, x), -0.5: lambda: call(S.RSQRT, x), -1: lambda: call(S.RECIP, x)}
    if isinstance(e, (int, float)) and e in special:
        return special[e]()
    if isinstance(e, (int, float)) and e == 0:
        return const(1.0)
    return call(S.POW, x, e)


def _clamp(x: Term, lo: Any = None, hi: Any = None) -> Term:
    if lo is not None:
        x = call(S.MAX, x, lo)
    if hi is not None:
        x = call(S.MIN, x, hi)
    return x


def _div_mode(x: Term, y: Term, rounding_mode: str | None = None) -> Term:
    q = div(x, y)
    if rounding_mode == "floor":
        return call(S.FLOOR, q)
    if rounding_mode == "trunc":
        return call(S.WHERE, call(S.LT, q, 0.0), call(S.CEIL, q), call(S.FLOOR, q))
    return q


def _scaled(y: Term, alpha: Any) -> Term:
    return y if alpha == 1 else mul(y, alpha)


# op -> (number of leading tensor-or-scalar operands, term function of (operands..., extra args))
ELEMENTWISE: dict[Any, tuple[int, Callable[..., Term]]] = {
    aten.relu.default: (1, lambda x: call(S.MAX, x, 0.0)),
    aten.sigmoid.default: (1, lambda x: call(S.SIGMOID, x)),
    aten.tanh.default: (1, lambda x: call(S.TANH, x)),
    aten.exp.default: (1, lambda x: call(S.EXP, x)),
    aten.exp2.default: (1, lambda x: call(S.POW, 2.0, x)),
    aten.log.default: (1, lambda x: call(S.LOG, x)),
    aten.log2.default: (1, lambda x: mul(call(S.LOG, x), 1.0 / math.log(2.0))),
    aten.log1p.default: (1, lambda x: call(S.LOG1P, x)),
    aten.expm1.default: (1, lambda x: call(S.EXPM1, x)),
    aten.sqrt.default: (1, lambda x: call(S.SQRT, x)),
    aten.rsqrt.default: (1, lambda x: call(S.RSQRT, x)),
    aten.reciprocal.default: (1, lambda x: call(S.RECIP, x)),
    aten.neg.default: (1, lambda x: call(S.NEG, x)),
    aten.abs.default: (1, lambda x: call(S.ABS, x)),
    aten.erf.default: (1, lambda x: call(S.ERF, x)),
    aten.sin.default: (1, lambda x: call(S.SIN, x)),
    aten.cos.default: (1, lambda x: call(S.COS, x)),
    aten.floor.default: (1, lambda x: call(S.FLOOR, x)),
    aten.ceil.default: (1, lambda x: call(S.CEIL, x)),
    aten.round.default: (1, lambda x: call(S.ROUND, x)),
    aten.sign.default: (1, lambda x: call(S.SIGN, x)),
    aten.logical_not.default: (1, lambda x: call(S.NOT, x)),
    aten.silu.default: (1, lambda x: mul(x, call(S.SIGMOID, x))),
    aten.gelu.default: (1, _gelu),
    aten.leaky_relu.default: (
        1,
        lambda x, slope=0.01: call(S.WHERE, call(S.GT, x, 0.0), x, mul(x, slope)),
    ),
    aten.hardtanh.default: (1, lambda x, lo=-1.0, hi=1.0: _clamp(x, lo, hi)),
    aten.clamp.default: (1, _clamp),
    aten.clamp_min.default: (1, lambda x, lo: _clamp(x, lo, None)),
    aten.clamp_max.default: (1, lambda x, hi: _clamp(x, None, hi)),
    aten.pow.Tensor_Scalar: (1, _pow),
    aten.pow.Tensor_Tensor: (2, lambda x, y: call(S.POW, x, y)),
    aten.pow.Scalar: (2, lambda x, y: call(S.POW, x, y)),
    aten.add.Tensor: (2, lambda x, y, alpha=1: add(x, _scaled(y, alpha))),
    aten.add.Scalar: (2, lambda x, y, alpha=1: add(x, _scaled(y, alpha))),
    aten.sub.Tensor: (2, lambda x, y, alpha=1: sub(x, _scaled(y, alpha))),
    aten.sub.Scalar: (2, lambda x, y, alpha=1: sub(x, _scaled(y, alpha))),
    aten.rsub.Scalar: (2, lambda x, y, alpha=1: sub(y, _scaled(x, alpha))),
    aten.mul.Tensor: (2, mul),
    aten.mul.Scalar: (2, mul),
    aten.div.Tensor: (2, div),
    aten.div.Scalar: (2, div),
    aten.div.Tensor_mode: (2, _div_mode),
    aten.maximum.default: (2, lambda x, y: call(S.MAX, x, y)),
    aten.minimum.default: (2, lambda x, y: call(S.MIN, x, y)),
    aten.eq.Tensor: (2, lambda x, y: call(S.EQ, x, y)),
    aten.eq.Scalar: (2, lambda x, y: call(S.EQ, x, y)),
    aten.ne.Tensor: (2, lambda x, y: call(S.NE, x, y)),
    aten.ne.Scalar: (2, lambda x, y: call(S.NE, x, y)),
    aten.lt.Tensor: (2, lambda x, y: call(S.LT, x, y)),
    aten.lt.Scalar: (2, lambda x, y: call(S.LT, x, y)),
    aten.le.Tensor: (2, lambda x, y: call(S.LE, x, y)),
    aten.le.Scalar: (2, lambda x, y: call(S.LE, x, y)),
    aten.gt.Tensor: (2, lambda x, y: call(S.GT, x, y)),
    aten.gt.Scalar: (2, lambda x, y: call(S.GT, x, y)),
    aten.ge.Tensor: (2, lambda x, y: call(S.GE, x, y)),
    aten.ge.Scalar: (2, lambda x, y: call(S.GE, x, y)),
    aten.logical_and.default: (2, lambda x, y: call(S.AND, x, y)),
    aten.logical_or.default: (2, lambda x, y: call(S.OR, x, y)),
    aten.logical_xor.default: (2, lambda x, y: call(S.XOR, x, y)),
    aten.where.self: (3, lambda c, x, y: call(S.WHERE, c, x, y)),
}


def _elementwise_rule(n_operands: int, fn: Callable[..., Term]) -> Rule:
    def rule(ctx: LowerCtx, *args: Any, **kwargs: Any) -> View:
        operands, extra = args[:n_operands], args[n_operands:]
        shape = ctx.shape
        return elementwise(
            ctx.b, ctx.hint, shape, ctx.dtype, operands, lambda *t: fn(*t, *extra, **kwargs)
        )

    return rule


for _op, (_n, _fn) in ELEMENTWISE.items():
    lower(_op)(_elementwise_rule(_n, _fn))


@lower(aten.clamp.Tensor)
def _clamp_tensor(ctx: LowerCtx, x: View, lo: View | None = None, hi: View | None = None) -> View:
    bounds = [v for v in (lo, hi) if v is not None]

    def fn(xt: Term, *bt: Term) -> Term:
        it = iter(bt)
        return _clamp(xt, next(it) if lo is not None else None, next(it) if hi is not None else None)

    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, [x, *bounds], fn)


@lower(aten._to_copy.default)
def _to_copy(ctx: LowerCtx, x: View, **kwargs: Any) -> View:
    dtype = ctx.dtype
    if dtype == x.dtype:
        return x
    return elementwise(ctx.b, ctx.hint, ctx.shape, dtype, [x], lambda t: cast(dtype, t))


@lower(aten.copy.default)
def _copy(ctx: LowerCtx, dst: View, src: View, non_blocking: bool = False) -> View:
    """`dst.copy_(src)` made functional: a tensor of dst's shape and dtype holding src (broadcast,
    cast); dst's values are never read. When it updates an input or buffer in place the converter
    marks the output `updates` that input, and pricing moves the written elements once
    (docs/BOUNDS.md, in-place updates)."""
    src = views.expand(src, ctx.shape)
    if src.dtype == ctx.dtype:
        return src
    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, [src], lambda t: cast(ctx.dtype, t))


# ---- views and creation: index maps, no statements -----------------------------------------------


@lower(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default, aten.detach.default)
def _identity(ctx: LowerCtx, x: View, **kwargs: Any) -> View:
    return x


@lower(aten.view.default, aten._unsafe_view.default, aten.reshape.default)
def _reshape(ctx: LowerCtx, x: View, shape: Sequence[int]) -> View:
    return views.reshape(x, ctx.shape)


@lower(aten.permute.default)
def _permute(ctx: LowerCtx, x: View, dims: Sequence[int]) -> View:
    return views.permute(x, dims)


@lower(aten.t.default)
def _t(ctx: LowerCtx, x: View) -> View:
    return views.permute(x, list(range(x.rank))[::-1])


@lower(aten.transpose.int)
def _transpose(ctx: LowerCtx, x: View, d0: int, d1: int) -> View:
    dims = list(range(x.rank))
    d0, d1 = d0 % x.rank, d1 % x.rank
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return views.permute(x, dims)


@lower(aten.expand.default)
def _expand(ctx: LowerCtx, x: View, size: Sequence[int], implicit: bool = False) -> View:
    return views.expand(x, ctx.shape)


@lower(aten.slice.Tensor)
def _slice(ctx: LowerCtx, x: View, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> View:
    size = x.shape[dim % x.rank]
    return views.slice_(x, dim, 0 if start is None else start, size if end is None else min(end, size), step)


@lower(aten.select.int)
def _select(ctx: LowerCtx, x: View, dim: int, index: int) -> View:
    return views.select(x, dim, index)


@lower(aten.unsqueeze.default)
def _unsqueeze(ctx: LowerCtx, x: View, dim: int) -> View:
    return views.unsqueeze(x, dim)


@lower(aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
def _squeeze(ctx: LowerCtx, x: View, dims: Any = None) -> View:
    if isinstance(dims, int):
        dims = [dims]
    return views.squeeze(x, dims)


@lower(aten.cat.default)
def _cat(ctx: LowerCtx, tensors: Sequence[View], dim: int = 0) -> View:
    return views.cat(list(tensors), dim)


@lower(aten.split_with_sizes.default)
def _split_with_sizes(ctx: LowerCtx, x: View, sizes: Sequence[int], dim: int = 0) -> list[View]:
    out, start = [], 0
    for size in sizes:
        out.append(views.slice_(x, dim, start, start + size))
        start += size
    return out


@lower(aten.split.Tensor)
def _split(ctx: LowerCtx, x: View, size: int, dim: int = 0) -> list[View]:
    total = x.shape[dim % x.rank]
    return _split_with_sizes(ctx, x, [min(size, total - s) for s in range(0, total, size)], dim)


@lower(aten.unbind.int)
def _unbind(ctx: LowerCtx, x: View, dim: int = 0) -> list[View]:
    return [views.select(x, dim, k) for k in range(x.shape[dim % x.rank])]


@lower(aten.repeat.default)
def _repeat(ctx: LowerCtx, x: View, repeats: Sequence[int]) -> View:
    return views.repeat(x, repeats)


@lower(aten.full.default)
def _full(ctx: LowerCtx, size: Sequence[int], value: Any, **kwargs: Any) -> View:
    return views.constant(value, ctx.shape, ctx.dtype)


@lower(aten.full_like.default)
def _full_like(ctx: LowerCtx, x: View, value: Any, **kwargs: Any) -> View:
    return views.constant(value, ctx.shape, ctx.dtype)


@lower(aten.scalar_tensor.default)
def _scalar_tensor(ctx: LowerCtx, value: Any, **kwargs: Any) -> View:
    return views.constant(value, (), ctx.dtype)


@lower(aten.arange.start_step)
def _arange(ctx: LowerCtx, start: Any, end: Any = None, step: Any = 1, **kwargs: Any) -> View:
    if not all(isinstance(v, int) for v in (start, step)):
        raise SolarError("arange with non-integer start or step is not supported yet")
    dtype = ctx.dtype
    return View(ctx.shape, dtype, lambda idx: (((), Cast(dtype, Index(idx[0] * step + start))),))


@lower(aten._assert_tensor_metadata.default)
def _assert_metadata(ctx: LowerCtx, x: View, *args: Any, **kwargs: Any) -> None:
    """A dtype/shape assertion export records before a cast (`x.float()`): nothing to compute."""
    return


# ---- softmax and layer norm ----------------------------------------------------------------------


def _softmax_parts(ctx: LowerCtx, x: View, dim: int) -> tuple[View, View, View, list, tuple]:
    """Row maximum m, e = exp(x - m) stored in the output, row sum s of e."""
    b, dtype = ctx.b, ctx.dtype
    d = dim % x.rank
    m = reduce(b, f"{ctx.hint}_max", x, [d], True, Update.MAX, dtype)
    loops, idx = loop_vars("i", x.shape)
    y = b.temp(ctx.hint, x.shape, dtype)
    m_at = views.expand(m, x.shape).at(idx)
    return m, y, m_at, loops, idx


@lower(aten._softmax.default)
def _softmax(ctx: LowerCtx, x: View, dim: int, half_to_float: bool = False) -> View:
    b, dtype = ctx.b, ctx.dtype
    m, y, m_at, loops, idx = _softmax_parts(ctx, x, dim)
    b.emit(loops, y.base, idx, Update.ASSIGN, call(S.EXP, sub(x.at(idx), m_at)))
    s = reduce(b, f"{ctx.hint}_sum", y, [dim % x.rank], True, Update.ADD, dtype)
    s_loops, s_idx = loop_vars("i", s.shape)
    b.emit(s_loops, s.base, s_idx, Update.ASSIGN, call(S.RECIP, s.at(s_idx)))
    b.emit(loops, y.base, idx, Update.ASSIGN, mul(y.at(idx), views.expand(s, x.shape).at(idx)))
    return y


@lower(aten._log_softmax.default)
def _log_softmax(ctx: LowerCtx, x: View, dim: int, half_to_float: bool = False) -> View:
    b, dtype = ctx.b, ctx.dtype
    d = dim % x.rank
    m, y, m_at, loops, idx = _softmax_parts(ctx, x, dim)
    s = reduce(
        b, f"{ctx.hint}_sum", x, [d], True, Update.ADD, dtype,
        value=lambda t, i: call(S.EXP, sub(t, views.expand(m, x.shape).at(i))),
    )
    s_loops, s_idx = loop_vars("i", s.shape)
    b.emit(s_loops, s.base, s_idx, Update.ASSIGN, add(call(S.LOG, s.at(s_idx)), m.at(s_idx)))
    b.emit(loops, y.base, idx, Update.ASSIGN, sub(x.at(idx), views.expand(s, x.shape).at(idx)))
    return y


@lower(aten.native_layer_norm.default)
def _layer_norm(ctx: LowerCtx, x: View, normalized_shape: Sequence[int], weight: View | None, bias: View | None, eps: float) -> tuple[View, View, View]:
    b = ctx.b
    dims = list(range(x.rank - len(normalized_shape), x.rank))
    n = math.prod(x.shape[k] for k in dims)
    (_, y_dtype), (stat_shape, stat_dtype) = ctx.meta(0), ctx.meta(1)
    mean = reduce(b, f"{ctx.hint}_mean", x, dims, True, Update.ADD, stat_dtype)
    scale_in_place(ctx, mean, 1.0 / n)

    def centred_sq(t: Term, i: tuple[Affine, ...]) -> Term:
        dlt = sub(t, views.expand(mean, x.shape).at(i))
        return mul(dlt, dlt)

    rstd = reduce(b, f"{ctx.hint}_rstd", x, dims, True, Update.ADD, stat_dtype, value=centred_sq)
    r_loops, r_idx = loop_vars("i", rstd.shape)
    b.emit(r_loops, rstd.base, r_idx, Update.ASSIGN, call(S.RSQRT, add(mul(rstd.at(r_idx), 1.0 / n), eps)))

    def normalise(xt: Term, mt: Term, rt: Term, *affine: Term) -> Term:
        out = mul(sub(xt, mt), rt)
        if weight is not None:
            out = mul(out, affine[0])
        if bias is not None:
            out = add(out, affine[-1])
        return out

    extra = [v for v in (weight, bias) if v is not None]
    y = elementwise(b, ctx.hint, x.shape, y_dtype, [x, mean, rstd, *extra], normalise)
    return y, views.reshape(mean, stat_shape), views.reshape(rstd, stat_shape)


# ---- contractions --------------------------------------------------------------------------------


def _epilogue(ctx: LowerCtx, out: View, alpha: Any, bias: View | None, beta: Any) -> View:
    """out = alpha*out + beta*bias in place, kept out of the contraction so that the contraction
    statement stays a pure product of two operands (what tensor cores run)."""
    if alpha == 1 and (bias is None or beta == 0):
        return out
    loops, idx = loop_vars("i", out.shape)
    value = _scaled(out.at(idx), alpha)
    if bias is not None and beta != 0:
        value = add(value, _scaled(views.expand(bias, out.shape).at(idx), beta))
    ctx.b.emit(loops, out.base, idx, Update.ASSIGN, value)
    return out


@lower(aten.mm.default)
def _mm(ctx: LowerCtx, a: View, c: View) -> View:
    (m, k), n = a.shape, c.shape[1]
    return contract(
        ctx.b, ctx.hint, (m, n), ctx.dtype, (k,),
        lambda o, r: a.at((o[0], r[0])), lambda o, r: c.at((r[0], o[1])),
    )


@lower(aten.bmm.default)
def _bmm(ctx: LowerCtx, a: View, c: View) -> View:
    (bt, m, k), n = a.shape, c.shape[2]
    return contract(
        ctx.b, ctx.hint, (bt, m, n), ctx.dtype, (k,),
        lambda o, r: a.at((o[0], o[1], r[0])), lambda o, r: c.at((o[0], r[0], o[2])),
    )


@lower(aten.addmm.default)
def _addmm(ctx: LowerCtx, bias: View, a: View, c: View, beta: Any = 1, alpha: Any = 1) -> View:
    (m, k), n = a.shape, c.shape[1]
    if alpha == 1 and beta == 1:
        shape = (m, n)
        return contract(
            ctx.b, ctx.hint, shape, ctx.dtype, (k,),
            lambda o, r: a.at((o[0], r[0])), lambda o, r: c.at((r[0], o[1])),
            init=lambda o: views.expand(bias, shape).at(o),
        )
    return _epilogue(ctx, _mm(ctx, a, c), alpha, bias, beta)


@lower(aten.convolution.default)
def _convolution(
    ctx: LowerCtx, x: View, w: View, bias: View | None, stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int,
) -> View:
    return convolution(ctx, x, w, bias, stride, padding, dilation, transposed, groups)


__all__ = ["ELEMENTWISE"]
