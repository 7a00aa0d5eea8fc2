"""Elementwise primitives: arithmetic, transcendentals, comparisons, selection, logic and dtype
conversion. One table maps each primitive to the scalar terms it computes; the shared
`elementwise` builder does the rest. Rank-0 operands (literals, scalars) broadcast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jax import lax

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import Term, add, call, cast, div, elementwise, mul, sub
from solar.frontends.jax.context import IndexValue, LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import Rule, lower
from solar.frontends.jax.primitives import P
from solar.frontends.views import View
from solar.ir.affine import Affine, value_range
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S


def _trunc(q: Term) -> Term:
    return call(S.WHERE, call(S.LT, q, 0.0), call(S.CEIL, q), call(S.FLOOR, q))


def _round(x: Term, rounding_method: Any = lax.RoundingMethod.AWAY_FROM_ZERO) -> Term:
    if rounding_method == lax.RoundingMethod.TO_NEAREST_EVEN:
        return call(S.ROUND, x)
    return mul(call(S.SIGN, x), call(S.FLOOR, add(call(S.ABS, x), 0.5)))


def _select_n(pred: Term, *cases: Term) -> Term:
    """cases[pred]: a bool predicate picks cases[1] where true; an integer one indexes."""
    if len(cases) == 1:
        return cases[0]
    if len(cases) == 2:
        return call(S.WHERE, pred, cases[1], cases[0])
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        out = call(S.WHERE, call(S.EQ, pred, k), cases[k], out)
    return out


# primitive -> term function of the operand terms (and the equation's parameters as keywords)
ELEMENTWISE: dict[Any, Callable[..., Term]] = {
    P.add_p: add,
    P.sub_p: sub,
    P.mul_p: mul,
    P.div_p: div,  # integer outputs truncate toward zero when stored, as lax.div does
    P.max_p: lambda x, y: call(S.MAX, x, y),
    P.min_p: lambda x, y: call(S.MIN, x, y),
    P.pow_p: lambda x, y: call(S.POW, x, y),
    P.neg_p: lambda x: call(S.NEG, x),
    P.abs_p: lambda x: call(S.ABS, x),
    P.sign_p: lambda x: call(S.SIGN, x),
    P.floor_p: lambda x: call(S.FLOOR, x),
    P.ceil_p: lambda x: call(S.CEIL, x),
    P.round_p: _round,
    P.square_p: lambda x: mul(x, x),
    P.exp_p: lambda x, **_: call(S.EXP, x),
    P.exp2_p: lambda x, **_: call(S.POW, 2.0, x),
    P.log_p: lambda x, **_: call(S.LOG, x),
    P.log1p_p: lambda x, **_: call(S.LOG1P, x),
    P.expm1_p: lambda x, **_: call(S.EXPM1, x),
    P.tanh_p: lambda x, **_: call(S.TANH, x),
    P.one_minus_square_p: lambda x, **_: sub(1.0, mul(x, x)),  # tanh' = 1 - tanh^2 (JAX >= 0.11)
    P.logistic_p: lambda x, **_: call(S.SIGMOID, x),
    P.erf_p: lambda x: call(S.ERF, x),
    P.erfc_p: lambda x: sub(1.0, call(S.ERF, x)),
    P.sqrt_p: lambda x, **_: call(S.SQRT, x),
    P.rsqrt_p: lambda x, **_: call(S.RSQRT, x),
    P.sin_p: lambda x, **_: call(S.SIN, x),
    P.cos_p: lambda x, **_: call(S.COS, x),
    P.is_finite_p: lambda x: call(S.EQ, sub(x, x), 0.0),  # x - x is NaN exactly for inf and NaN
    P.eq_p: lambda x, y: call(S.EQ, x, y),
    P.ne_p: lambda x, y: call(S.NE, x, y),
    P.lt_p: lambda x, y: call(S.LT, x, y),
    P.le_p: lambda x, y: call(S.LE, x, y),
    P.gt_p: lambda x, y: call(S.GT, x, y),
    P.ge_p: lambda x, y: call(S.GE, x, y),
    P.select_n_p: _select_n,
    P.clamp_p: lambda lo, x, hi: call(S.MIN, call(S.MAX, x, lo), hi),
    P.and_p: lambda x, y: call(S.AND, x, y),
    P.or_p: lambda x, y: call(S.OR, x, y),
    P.xor_p: lambda x, y: call(S.XOR, x, y),
    P.not_p: lambda x: call(S.NOT, x),
}

# Logical ops are bit ops on integers in JAX; the IR's AND/OR/XOR/NOT are logical (bool) ops.
BOOL_ONLY = {P.and_p, P.or_p, P.xor_p, P.not_p}

# Integer arithmetic on loop counters stays an index expression (no statement).
AFFINE: dict[Any, Callable[[Affine, Affine], Affine | None]] = {
    P.add_p: lambda a, b: a + b,
    P.sub_p: lambda a, b: a - b,
    P.mul_p: lambda a, b: a * b if a.is_const or b.is_const else None,
}


def _as_affine(x: Any) -> Affine | None:
    if isinstance(x, IndexValue):
        return x.expr
    if isinstance(x, int) and not isinstance(x, bool):
        return Affine(const=x)
    return None


# Comparisons of a loop counter with a constant that hold (or fail) over the whole loop fold to a
# Python bool: the negative-index normalisation JAX wraps around every dynamic index vanishes.
DECIDE: dict[Any, Callable[[int, int], bool | None]] = {
    P.lt_p: lambda lo, hi: True if hi < 0 else False if lo >= 0 else None,
    P.le_p: lambda lo, hi: True if hi <= 0 else False if lo > 0 else None,
    P.gt_p: lambda lo, hi: True if lo > 0 else False if hi <= 0 else None,
    P.ge_p: lambda lo, hi: True if lo >= 0 else False if hi < 0 else None,
    P.eq_p: lambda lo, hi: True if lo == hi == 0 else False if lo > 0 or hi < 0 else None,
    P.ne_p: lambda lo, hi: False if lo == hi == 0 else True if lo > 0 or hi < 0 else None,
}


def _fold(ctx: LowerCtx, prim: Any, operands: tuple[Any, ...]) -> Any:
    """The result when it is known without data (integer constant and counter arithmetic,
    decided comparisons, a selection by a known predicate), else None."""
    if prim is P.select_n_p and isinstance(operands[0], (bool, int)):
        return operands[1 + int(operands[0])]
    if prim not in AFFINE and prim not in DECIDE:
        return None
    a, b = (_as_affine(x) for x in operands)
    if a is None or b is None:  # not integer constants or counters
        return None
    if prim in DECIDE:
        return DECIDE[prim](*value_range(a - b, ctx.state.ranges))
    result = AFFINE[prim](a, b)
    if result is None:
        return None
    return result.const if result.is_const else IndexValue(result, ctx.dtype)


def _elementwise_rule(prim: Any, fn: Callable[..., Term]) -> Rule:
    def rule(ctx: LowerCtx, *operands: Any, **params: Any) -> Any:
        folded = _fold(ctx, prim, operands)
        if folded is not None:
            return folded
        if prim in BOOL_ONLY and ctx.dtype is not DType.BOOL:
            raise SolarError(
                f"bitwise {prim.name} on {ctx.dtype.text} integers is not supported yet (only on bool)"
            )
        ins = [as_view(x) if isinstance(x, IndexValue) else x for x in operands]
        return elementwise(
            ctx.b, ctx.hint, ctx.shape, ctx.dtype, ins, lambda *t: fn(*t, **_used(fn, params))
        )

    return rule


def _used(fn: Callable, params: dict[str, Any]) -> dict[str, Any]:
    """The equation parameters a term function takes (e.g. round's rounding_method)."""
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount + fn.__code__.co_kwonlyargcount]
    return {k: v for k, v in params.items() if k in names}


for _prim, _fn in ELEMENTWISE.items():
    lower(_prim)(_elementwise_rule(_prim, _fn))


@lower(P.rem_p)
def _rem(ctx: LowerCtx, x: Any, y: Any) -> View:
    """x - y * trunc(x / y): C's fmod (the sign of x); integers truncate by the cast."""
    dtype = ctx.dtype

    def fn(a: Term, b: Term) -> Term:
        q = div(a, b)
        return sub(a, mul(b, cast(dtype, q) if not dtype.is_float else _trunc(q)))

    return elementwise(
        ctx.b, ctx.hint, ctx.shape, dtype, [as_view(x) if isinstance(x, IndexValue) else x, y], fn
    )


@lower(P.convert_element_type_p)
def _convert(ctx: LowerCtx, x: Any, **params: Any) -> Any:
    dtype = ctx.dtype
    if isinstance(x, IndexValue) and dtype.kind == "int":
        return IndexValue(x.expr, dtype)
    if not isinstance(x, (View, IndexValue)):  # a literal: converted now (int() truncates, as JAX)
        return {"float": float, "int": int, "bool": bool}[dtype.kind](x)
    x = as_view(x)
    if x.dtype is dtype:
        return x
    return elementwise(ctx.b, ctx.hint, ctx.shape, dtype, [x], lambda t: cast(dtype, t))


@lower(P.integer_pow_p)
def _integer_pow(ctx: LowerCtx, x: Any, *, y: int) -> View:
    """x ** y by squaring: the squares are stored (a shared subterm would be counted once per
    use), so x**4 costs 2 multiplies and x**5 costs 3; a negative y adds one reciprocal."""
    b, shape, dtype = ctx.b, ctx.shape, ctx.dtype
    x = as_view(x, shape, dtype)
    if y == 0:
        return views.constant(1.0 if dtype.is_float else 1, shape, dtype)
    n, power, factors = abs(y), x, []
    while n:
        if n & 1:
            factors.append(power)
        n >>= 1
        if n:
            power = elementwise(b, f"{ctx.hint}_sq", shape, dtype, [power], lambda t: mul(t, t))

    def product(*terms: Term) -> Term:
        out = terms[0]
        for t in terms[1:]:
            out = mul(out, t)
        return call(S.RECIP, out) if y < 0 else out

    if len(factors) == 1 and y > 0:
        return factors[0]
    return elementwise(b, ctx.hint, shape, dtype, factors, product)


__all__ = ["ELEMENTWISE"]
