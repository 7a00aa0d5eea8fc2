"""Bitwise ops on bool and integer tensors: and / or / xor (tensor and scalar operands) and shifts.
On bool tensors and/or/xor are the logical ops (so that masks such as a causal mask `&` a padding
mask stay affine conditions the structure pass turns into guards); on integers they are the bit
ops. One BIT-class op per element."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends.builder import call, elementwise
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S

aten = torch.ops.aten

# op -> (op on bool tensors, op on integer tensors)
BITWISE: dict[Any, tuple[S, S]] = {}
for _name, _ops in {
    "bitwise_and": (S.AND, S.BITAND),
    "bitwise_or": (S.OR, S.BITOR),
    "bitwise_xor": (S.XOR, S.BITXOR),
}.items():
    for _overload in ("Tensor", "Scalar", "Scalar_Tensor"):
        BITWISE[getattr(getattr(aten, _name), _overload)] = _ops

SHIFTS: dict[Any, S] = {
    aten.__lshift__.Tensor: S.SHL,
    aten.__lshift__.Scalar: S.SHL,
    aten.__rshift__.Tensor: S.SHR,
    aten.__rshift__.Scalar: S.SHR,
    aten.bitwise_left_shift.Tensor: S.SHL,
    aten.bitwise_left_shift.Tensor_Scalar: S.SHL,
    aten.bitwise_left_shift.Scalar_Tensor: S.SHL,
    aten.bitwise_right_shift.Tensor: S.SHR,
    aten.bitwise_right_shift.Tensor_Scalar: S.SHR,
    aten.bitwise_right_shift.Scalar_Tensor: S.SHR,
}


def _check_dtype(ctx: LowerCtx, what: str) -> DType:
    dtype = ctx.dtype
    if dtype.kind not in ("int", "bool"):
        raise SolarError(
            f"{what} of {dtype.text} tensors: bitwise ops take bool or integer tensors"
        )
    return dtype


def _bitwise_rule(ops: tuple[S, S]) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: View | int | bool, y: View | int | bool) -> View:
        dtype = _check_dtype(ctx, str(ctx.node.name))
        op = ops[0] if dtype == DType.BOOL else ops[1]
        return elementwise(ctx.b, ctx.hint, ctx.shape, dtype, [x, y], lambda a, b: call(op, a, b))

    return rule


def _shift_rule(op: S) -> Callable[..., View]:
    def rule(ctx: LowerCtx, x: View | int, y: View | int) -> View:
        dtype = _check_dtype(ctx, str(ctx.node.name))
        if dtype == DType.BOOL:
            raise SolarError("shifts of bool tensors are not defined; cast to an integer dtype")
        return elementwise(ctx.b, ctx.hint, ctx.shape, dtype, [x, y], lambda a, b: call(op, a, b))

    return rule


for _op, _pair in BITWISE.items():
    lower(_op)(_bitwise_rule(_pair))
for _op, _shift in SHIFTS.items():
    lower(_op)(_shift_rule(_shift))

__all__ = ["BITWISE", "SHIFTS"]
