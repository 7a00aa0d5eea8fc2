"""Cases for solar/frontends/torch/lowerings/distances.py: p = 2 (the matmul form), 1, inf, 0 and a
fractional p; batched and broadcast batches."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten._cdist_forward.default: [
        ((F(5, 3), F(4, 3), 2.0, None), {}),
        ((F(2, 5, 3), F(2, 4, 3), 2.0, None), {}),
        ((F(2, 1, 5, 3), F(3, 4, 3), 2.0, None), {}),
        ((F(2, 5, 3), F(2, 4, 3), 1.0, None), {}),
        ((F(5, 3), F(4, 3), float("inf"), None), {}),
        ((F(5, 3), F(4, 3), 0.0, None), {}),
        ((F(5, 3), F(4, 3), 1.5, None), {}),
    ],
}
