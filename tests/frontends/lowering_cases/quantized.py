"""Cases for solar/frontends/torch/lowerings/quantized.py (int8 values from randn: small
integers, so int32 accumulation is exact)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F, T

aten = torch.ops.aten


def I8(*shape: int) -> T:
    return T(shape, torch.int8)


CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten._int_mm.default: [
        ((I8(17, 32), I8(32, 8)), {}),
        ((I8(32, 16), T((16, 24), torch.int8, transpose=True)), {}),
    ],
    aten._weight_int8pack_mm.default: [
        ((F(3, 16), I8(8, 16), F(8)), {}),
        ((F(2, 32), I8(16, 32), F(16)), {}),
    ],
}
