"""Cases for solar/frontends/torch/lowerings/strided.py: unfold (overlapping, gapped, last and
inner dims) and as_strided (identity, overlapping windows, transposed, with an offset)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.unfold.default: [
        ((F(2, 9), 1, 3, 2), {}),
        ((F(2, 8, 3), 1, 2, 3), {}),
        ((F(7), 0, 7, 1), {}),
        ((F(2, 3, 8, 8), 2, 4, 4), {}),
    ],
    aten.as_strided.default: [
        ((F(2, 3, 4), [2, 3, 4], [12, 4, 1]), {}),
        ((F(10), [4, 3], [2, 1]), {}),
        ((F(3, 4), [4, 3], [1, 4]), {}),
        ((F(3, 4), [2, 2], [4, 1], 5), {}),
    ],
}
