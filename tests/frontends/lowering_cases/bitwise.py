"""Cases for solar/frontends/torch/lowerings/bitwise.py: bool and integer operands (integers are
`I(...)`: small non-negative values, so shifts stay in range)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import B, T

aten = torch.ops.aten


def I(*shape: int, dtype: torch.dtype = torch.int64) -> T:
    return T(shape, dtype, positive=True)


CASES: dict[Any, list[tuple[tuple, dict]]] = {}
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _pkt = getattr(aten, _name)
    CASES[_pkt.Tensor] = [((B(3, 5), B(5)), {}), ((I(3, 5), I(3, 1, dtype=torch.int32)), {})]
    CASES[_pkt.Scalar] = [((I(3, 5), 6), {}), ((B(3, 5), True), {})]
    CASES[_pkt.Scalar_Tensor] = [((5, I(3, 5)), {})]
for _op in (aten.__lshift__, aten.__rshift__):
    CASES[_op.Tensor] = [((I(3, 5), I(5)), {})]
    CASES[_op.Scalar] = [((I(3, 5, dtype=torch.int32), 2), {})]
for _op in (aten.bitwise_left_shift, aten.bitwise_right_shift):
    CASES[_op.Tensor] = [((I(3, 5), I(3, 5)), {})]
    CASES[_op.Tensor_Scalar] = [((I(3, 5), 3), {})]
    CASES[_op.Scalar_Tensor] = [((64, I(3, 5)), {})]
