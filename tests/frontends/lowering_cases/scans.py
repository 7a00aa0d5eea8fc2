"""Cases for solar/frontends/torch/lowerings/scans.py: lengths that are and are not powers of two,
every axis, integer and boolean inputs (cumsum of a mask counts in int64)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import B, F, P

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.cumsum.default: [
        ((F(3, 8), 1), {}),
        ((F(3, 13), -1), {}),
        ((F(7, 2, 3), 0), {}),
        ((F(1, 1), 1), {}),
        ((B(4, 11), 1), {}),
        ((F(2, 6), 1), {"dtype": torch.float64}),
    ],
    aten.cumprod.default: [((P(3, 9), 1), {}), ((P(16, 2), 0), {})],
}
