"""Expression simplification for the passes: constant folding through the one scalar-op table,
algebraic identities, affine arithmetic on index values, and *affine conditions* — comparisons of
index values that a statement can carry as guards instead of computing them.

Identities that hold for finite values only (x*0 = 0, x + (-inf) = -inf, and 0/x = 0 for x != 0)
are applied: the passes assume the program's data is finite and divisors nonzero (inf may appear
only as a constant the program writes, e.g. a -inf attention mask). Every other rule is exact."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from solar.ir.affine import Affine, Constraint, as_affine
from solar.ir.dtypes import DType
from solar.ir.nodes import Call, Cast, Const, Expr, Index, Indirect, Load, walk
from solar.ir.scalar_ops import OPS, CostClass, ScalarOp, Update

S = ScalarOp
INF = math.inf
BOOL_OPS = frozenset({S.LT, S.LE, S.GT, S.GE, S.EQ, S.NE, S.AND, S.OR, S.NOT, S.XOR})
COMPARISONS = frozenset({S.LT, S.LE, S.GT, S.GE, S.EQ, S.NE})
# a OP b  <=>  b MIRROR[OP] a
MIRROR = {S.LT: S.GT, S.LE: S.GE, S.GT: S.LT, S.GE: S.LE, S.EQ: S.EQ, S.NE: S.NE}
INT_DTYPES = frozenset({DType.I64, DType.I32})  # hold every index value of a real tensor


# ---- queries -------------------------------------------------------------------------------------


def op_count(expr: Expr) -> int:
    """Scalar ops of `expr` that cost something (free ops such as casts excluded)."""
    return sum(
        1 for e in walk(expr) if isinstance(e, Call) and OPS[e.op].cost is not CostClass.FREE
    )


def is_bool(expr: Expr) -> bool:
    """True when `expr` certainly has a boolean value."""
    match expr:
        case Const(v):
            return isinstance(v, (bool, np.bool_))
        case Call(op, _):
            return op in BOOL_OPS
        case Cast(dtype, _):
            return dtype is DType.BOOL
    return False


def is_noop(update: Update, value: Expr) -> bool:
    """An accumulating update whose value is the update's identity leaves the target unchanged."""
    if update is Update.ASSIGN or not isinstance(value, Const) or update.identity is None:
        return False
    return float(value.value) == update.identity


def replace(expr: Expr, old: Expr, new: Expr) -> Expr:
    """`expr` with every subexpression equal to `old` replaced by `new`."""
    if expr == old:
        return new
    match expr:
        case Call(op, args):
            return Call(op, tuple(replace(a, old, new) for a in args))
        case Cast(dtype, arg):
            return Cast(dtype, replace(arg, old, new))
        case Load(tensor, index):
            return Load(
                tensor,
                tuple(
                    Indirect(replace(t.value, old, new), t.offset, t.distinct) if isinstance(t, Indirect) else t
                    for t in index
                ),
            )
    return expr


# ---- folding -------------------------------------------------------------------------------------


def _const(value: object) -> Const:
    if isinstance(value, np.generic):
        value = value.item()
    return Const(value)  # type: ignore[arg-type]


def _eval(op: ScalarOp, values: list[object]) -> Const | None:
    with np.errstate(all="ignore"):
        out = np.asarray(OPS[op].fn(*values))
    if out.ndim != 0:
        return None
    return _const(out.item())


def _cast_const(dtype: DType, value: object) -> Const | None:
    if dtype.kind == "int" and not math.isfinite(float(value)):
        return None
    with np.errstate(all="ignore"):
        return _const(np.asarray(value).astype(dtype.numpy).item())


def affine_value(expr: Expr) -> Affine | None:
    """The integer affine value of an index expression (Index, integer constants, integer casts)."""
    match expr:
        case Index(e):
            return e
        case Const(v) if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            return as_affine(int(v))
        case Cast(dtype, arg) if dtype in INT_DTYPES:
            return affine_value(arg)
    return None


def _zero_like(c: object) -> Const:
    return Const(0.0) if isinstance(c, float) else Const(0)


def _is(c: object, target: float) -> bool:
    return c is not None and not isinstance(c, (bool, np.bool_)) and float(c) == target


def _partial(op: ScalarOp, args: tuple[Expr, ...]) -> Expr | None:
    """Identities with some constant arguments (None when none applies)."""
    c = [a.value if isinstance(a, Const) else None for a in args]
    match op:
        case S.ADD:
            for k in (0, 1):
                if _is(c[k], 0.0):
                    return args[1 - k]
                if c[k] is not None and math.isinf(float(c[k])):
                    return Const(float(c[k]))
        case S.SUB:
            if _is(c[1], 0.0):
                return args[0]
            if _is(c[0], -INF) or _is(c[1], INF):
                return Const(-INF)
            if _is(c[0], INF) or _is(c[1], -INF):
                return Const(INF)
        case S.MUL:
            for k in (0, 1):
                if _is(c[k], 1.0):
                    return args[1 - k]
                if c[k] is not None and float(c[k]) == 0.0:
                    return _zero_like(c[k])
        case S.DIV:
            if _is(c[1], 1.0):
                return args[0]
            if _is(c[0], 0.0):
                return _zero_like(c[0])
        case S.MAX | S.MIN:
            neutral, absorbing = (-INF, INF) if op is S.MAX else (INF, -INF)
            for k in (0, 1):
                if _is(c[k], neutral):
                    return args[1 - k]
                if _is(c[k], absorbing):
                    return Const(absorbing)
        case S.WHERE:
            if c[0] is not None:
                return args[1] if c[0] else args[2]
            if args[1] == args[2]:
                return args[1]
        case S.AND | S.OR:
            absorbing = op is S.OR
            for k in (0, 1):
                if c[k] is not None and bool(c[k]) is absorbing:
                    return Const(absorbing)
                if c[k] is not None and is_bool(args[1 - k]):
                    return args[1 - k]
        case S.NOT:
            inner = args[0]
            if isinstance(inner, Call) and inner.op is S.NOT and is_bool(inner.args[0]):
                return inner.args[0]
        case S.NEG:
            inner = args[0]
            if isinstance(inner, Call) and inner.op is S.NEG:
                return inner.args[0]
    return None


def _affine_op(op: ScalarOp, args: tuple[Expr, ...]) -> Expr | None:
    """Integer arithmetic of index values stays an index value (free: no scalar op)."""
    vals = [affine_value(a) for a in args]
    if any(v is None for v in vals) or not any(isinstance(a, Index) for a in args):
        return None
    match op:
        case S.ADD:
            return Index(vals[0] + vals[1])
        case S.SUB:
            return Index(vals[0] - vals[1])
        case S.NEG:
            return Index(-vals[0])
        case S.MUL if vals[0].is_const or vals[1].is_const:
            return Index(vals[0] * vals[1])
    return None


def _const_index(expr: Expr) -> Expr:
    return Const(expr.expr.const) if isinstance(expr, Index) and expr.expr.is_const else expr


def fold(expr: Expr) -> Expr:
    """Simplify `expr` bottom-up (see the module docstring for the rules)."""
    match expr:
        case Call(op, args):
            args = tuple(fold(a) for a in args)
            if all(isinstance(a, Const) for a in args):
                out = _eval(op, [a.value for a in args])
                if out is not None:
                    return out
            simpler = _affine_op(op, args) or _partial(op, args)
            return Call(op, args) if simpler is None else _const_index(simpler)
        case Cast(dtype, arg):
            arg = fold(arg)
            if isinstance(arg, Const):
                out = _cast_const(dtype, arg.value)
                if out is not None:
                    return out
            if isinstance(arg, Index) and dtype in INT_DTYPES:
                return _const_index(arg)
            if isinstance(arg, Cast) and arg.dtype is dtype:
                return arg
            return Cast(dtype, arg)
        case Index():
            return _const_index(expr)
        case Load(tensor, index):
            if any(isinstance(t, Indirect) for t in index):
                return Load(
                    tensor,
                    tuple(
                        Indirect(fold(t.value), t.offset, t.distinct) if isinstance(t, Indirect) else t
                        for t in index
                    ),
                )
    return expr


# ---- affine conditions ---------------------------------------------------------------------------

Piece = tuple[Constraint, ...]  # a conjunction of constraints


@dataclass(frozen=True)
class Condition:
    """Where a boolean expression is true and where it is false, each as disjoint conjunctions."""

    true: tuple[Piece, ...]
    false: tuple[Piece, ...]


def negate(c: Constraint) -> tuple[Piece, ...]:
    """The complement of one constraint over the integers, as disjoint pieces."""
    if c.equality:
        return ((Constraint(c.expr - 1),), (Constraint(-c.expr - 1),))
    return ((Constraint(-c.expr - 1),),)


def complement(piece: Piece) -> tuple[Piece, ...]:
    """The complement of a conjunction as disjoint pieces: not c1; c1 and not c2; ..."""
    out: list[Piece] = []
    for k, c in enumerate(piece):
        out += [piece[:k] + neg for neg in negate(c)]
    return tuple(out)


def _side(expr: Expr) -> Affine | float | None:
    """A comparison operand: an integer affine value, a float-cast index value, or a number."""
    a = affine_value(expr)
    if a is not None:
        return a
    match expr:
        case Const(v) if not isinstance(v, (bool, np.bool_)) and math.isfinite(float(v)):
            return float(v)
        case Cast(dtype, Index(e)) if dtype.is_float:
            return e  # exact while |index| < 2**24, far beyond any tensor dimension here
    return None


_BUILD: dict[ScalarOp, Callable[[Affine, float], Constraint | None]] = {
    # affine OP number, as one constraint (None: the comparison is never true)
    S.LE: lambda a, c: Constraint(math.floor(c) - a),
    S.LT: lambda a, c: Constraint(math.ceil(c) - 1 - a),
    S.GE: lambda a, c: Constraint(a - math.ceil(c)),
    S.GT: lambda a, c: Constraint(a - math.floor(c) - 1),
    S.EQ: lambda a, c: Constraint(a - int(c), equality=True) if float(c).is_integer() else None,
}


def condition(expr: Expr) -> Condition | None:
    """The Condition of a comparison of index values (None when `expr` is not one)."""
    if not (isinstance(expr, Call) and expr.op in COMPARISONS):
        if isinstance(expr, Cast) and expr.dtype is DType.BOOL:
            a = affine_value(expr.arg)
            return None if a is None else condition(Call(S.NE, (Index(a), Const(0))))
        return None
    op = expr.op
    lhs, rhs = (_side(a) for a in expr.args)
    if lhs is None or rhs is None or not (isinstance(lhs, Affine) or isinstance(rhs, Affine)):
        return None
    if not isinstance(lhs, Affine):
        lhs, rhs, op = rhs, lhs, MIRROR[op]
    if isinstance(rhs, Affine):
        lhs, rhs = lhs - rhs, 0.0
    base = S.EQ if op is S.NE else op
    c = _BUILD[base](lhs, rhs)
    if c is not None and not c.expr.terms:  # holds everywhere or nowhere
        return None
    true: tuple[Piece, ...] = () if c is None else ((c,),)
    false: tuple[Piece, ...] = ((),) if c is None else negate(c)
    return Condition(false, true) if op is S.NE else Condition(true, false)


def find_condition(expr: Expr) -> tuple[Expr, Condition] | None:
    """The first affine condition inside `expr` (pre-order), with its regions."""
    for e in walk(expr):
        cond = condition(e)
        if cond is not None:
            return e, cond
    return None
