"""The one table of scalar operations: arity, numpy semantics, cost class. The interpreter, the lifter
and every backend read it; a new op is one enum member plus one row."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

import numpy as np


class CostClass(Enum):
    """Which hardware pipes may execute an op (see docs/BOUNDS.md, compute term)."""

    FMA = "fma"  # add/sub/mul/fma: the FMA pipe (tensor cores when part of a contraction)
    COMPARE = "compare"  # compare/select/min/max: ALU or FMA pipe
    TRANSCENDENTAL = "transcendental"  # exp/log/tanh/...: SFU, or FMA-pipe polynomials
    BIT = "bit"  # logical and bit ops: ALU pipe
    FREE = "free"  # no arithmetic (casts): priced at zero, which can only lower the bound


class ScalarOp(Enum):
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    NEG = "neg"
    ABS = "abs"
    MAX = "max"
    MIN = "min"
    EXP = "exp"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    RECIP = "recip"
    TANH = "tanh"
    SIGMOID = "sigmoid"
    ERF = "erf"
    POW = "pow"
    SIN = "sin"
    COS = "cos"
    LOG1P = "log1p"
    EXPM1 = "expm1"
    FLOOR = "floor"
    CEIL = "ceil"
    ROUND = "round"
    SIGN = "sign"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    EQ = "eq"
    NE = "ne"
    WHERE = "where"
    AND = "and"
    OR = "or"
    NOT = "not"
    XOR = "xor"
    BITAND = "bitand"
    BITOR = "bitor"
    BITXOR = "bitxor"
    BITNOT = "bitnot"
    SHL = "shl"
    SHR = "shr"
    RANDOM = "random"
    RANDN = "randn"


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf

    x = np.asarray(x)
    return erf(x).astype(np.result_type(x, np.float32) if x.dtype.kind == "f" else np.float32)


def _errstate(fn: Callable) -> Callable:
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return wrapped


def _counter_bits(stream: np.ndarray, counter: np.ndarray) -> np.ndarray:
    """53 pseudo-random bits per (stream, counter) pair: splitmix64 of the pair (a counter-based
    generator, as Philox is on GPUs: each element's draw depends only on its position)."""
    with np.errstate(over="ignore"):
        z = np.asarray(stream, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = z + np.asarray(counter, dtype=np.int64).astype(np.uint64) + np.uint64(0x632BE59BD9B4E019)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z >> np.uint64(11)


def _uniform(stream: np.ndarray, counter: np.ndarray) -> np.ndarray:
    """A uniform draw in [0, 1) for each (stream, counter)."""
    return (_counter_bits(stream, counter).astype(np.float64) * 2.0**-53).astype(np.float32)


def _normal(stream: np.ndarray, counter: np.ndarray) -> np.ndarray:
    """A standard normal draw for each (stream, counter) (Box-Muller of two uniform draws)."""
    c = np.asarray(counter, dtype=np.int64)
    u1 = (_counter_bits(stream, 2 * c).astype(np.float64) + 1.0) * 2.0**-53  # in (0, 1]
    u2 = _counter_bits(stream, 2 * c + 1).astype(np.float64) * 2.0**-53
    return (np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)).astype(np.float32)


@dataclass(frozen=True, slots=True)
class OpInfo:
    arity: int
    fn: Callable[..., np.ndarray]
    cost: CostClass
    flops: int = 1  # floating-point operations this op counts as (a multiply-add counts 2)


OPS: dict[ScalarOp, OpInfo] = {
    ScalarOp.ADD: OpInfo(2, np.add, CostClass.FMA),
    ScalarOp.SUB: OpInfo(2, np.subtract, CostClass.FMA),
    ScalarOp.MUL: OpInfo(2, np.multiply, CostClass.FMA),
    ScalarOp.DIV: OpInfo(2, _errstate(np.true_divide), CostClass.TRANSCENDENTAL),
    ScalarOp.NEG: OpInfo(1, np.negative, CostClass.FMA),
    ScalarOp.ABS: OpInfo(1, np.abs, CostClass.BIT),
    ScalarOp.MAX: OpInfo(2, np.maximum, CostClass.COMPARE),
    ScalarOp.MIN: OpInfo(2, np.minimum, CostClass.COMPARE),
    ScalarOp.EXP: OpInfo(1, _errstate(np.exp), CostClass.TRANSCENDENTAL),
    ScalarOp.LOG: OpInfo(1, _errstate(np.log), CostClass.TRANSCENDENTAL),
    ScalarOp.SQRT: OpInfo(1, _errstate(np.sqrt), CostClass.TRANSCENDENTAL),
    ScalarOp.RSQRT: OpInfo(1, _errstate(lambda x: 1 / np.sqrt(x)), CostClass.TRANSCENDENTAL),
    ScalarOp.RECIP: OpInfo(1, _errstate(lambda x: 1 / x), CostClass.TRANSCENDENTAL),
    ScalarOp.TANH: OpInfo(1, np.tanh, CostClass.TRANSCENDENTAL),
    ScalarOp.SIGMOID: OpInfo(1, _errstate(lambda x: 1 / (1 + np.exp(-x))), CostClass.TRANSCENDENTAL),
    ScalarOp.ERF: OpInfo(1, _erf, CostClass.TRANSCENDENTAL),
    ScalarOp.POW: OpInfo(2, _errstate(np.power), CostClass.TRANSCENDENTAL),
    ScalarOp.SIN: OpInfo(1, np.sin, CostClass.TRANSCENDENTAL),
    ScalarOp.COS: OpInfo(1, np.cos, CostClass.TRANSCENDENTAL),
    ScalarOp.LOG1P: OpInfo(1, _errstate(np.log1p), CostClass.TRANSCENDENTAL),
    ScalarOp.EXPM1: OpInfo(1, _errstate(np.expm1), CostClass.TRANSCENDENTAL),
    ScalarOp.FLOOR: OpInfo(1, np.floor, CostClass.FMA),
    ScalarOp.CEIL: OpInfo(1, np.ceil, CostClass.FMA),
    ScalarOp.ROUND: OpInfo(1, np.round, CostClass.FMA),
    ScalarOp.SIGN: OpInfo(1, np.sign, CostClass.COMPARE),
    ScalarOp.LT: OpInfo(2, np.less, CostClass.COMPARE),
    ScalarOp.LE: OpInfo(2, np.less_equal, CostClass.COMPARE),
    ScalarOp.GT: OpInfo(2, np.greater, CostClass.COMPARE),
    ScalarOp.GE: OpInfo(2, np.greater_equal, CostClass.COMPARE),
    ScalarOp.EQ: OpInfo(2, np.equal, CostClass.COMPARE),
    ScalarOp.NE: OpInfo(2, np.not_equal, CostClass.COMPARE),
    ScalarOp.WHERE: OpInfo(3, np.where, CostClass.COMPARE),
    ScalarOp.AND: OpInfo(2, np.logical_and, CostClass.BIT),
    ScalarOp.OR: OpInfo(2, np.logical_or, CostClass.BIT),
    ScalarOp.NOT: OpInfo(1, np.logical_not, CostClass.BIT),
    ScalarOp.XOR: OpInfo(2, np.logical_xor, CostClass.BIT),
    ScalarOp.BITAND: OpInfo(2, np.bitwise_and, CostClass.BIT),
    ScalarOp.BITOR: OpInfo(2, np.bitwise_or, CostClass.BIT),
    ScalarOp.BITXOR: OpInfo(2, np.bitwise_xor, CostClass.BIT),
    ScalarOp.BITNOT: OpInfo(1, np.invert, CostClass.BIT),
    ScalarOp.SHL: OpInfo(2, np.left_shift, CostClass.BIT),
    ScalarOp.SHR: OpInfo(2, np.right_shift, CostClass.BIT),
    # Random draws random(stream, counter) / randn(stream, counter): a counter-based generator's
    # value at one position. One ALU op each: a floor under any generator's work (Philox4x32-10
    # needs tens of integer instructions per four values; docs/BOUNDS.md, random ops).
    ScalarOp.RANDOM: OpInfo(2, _uniform, CostClass.BIT),
    ScalarOp.RANDN: OpInfo(2, _normal, CostClass.BIT),
}


class Update(Enum):
    """How a statement combines its value into the target element."""

    ASSIGN = "="
    ADD = "+="
    MUL = "*="
    MAX = "max="
    MIN = "min="

    @property
    def op(self) -> ScalarOp | None:
        return _UPDATE_OP[self]

    @property
    def ufunc(self) -> np.ufunc | None:
        op = _UPDATE_OP[self]
        return None if op is None else OPS[op].fn

    @property
    def identity(self) -> float | None:
        return _UPDATE_IDENTITY[self]


_UPDATE_OP = {
    Update.ASSIGN: None,
    Update.ADD: ScalarOp.ADD,
    Update.MUL: ScalarOp.MUL,
    Update.MAX: ScalarOp.MAX,
    Update.MIN: ScalarOp.MIN,
}
_UPDATE_IDENTITY = {
    Update.ASSIGN: None,
    Update.ADD: 0.0,
    Update.MUL: 1.0,
    Update.MAX: float("-inf"),
    Update.MIN: float("inf"),
}
