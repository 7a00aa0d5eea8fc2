"""Cases for solar/frontends/torch/lowerings/attention.py."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import B, F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.scaled_dot_product_attention.default: [
        ((F(2, 3, 5, 4), F(2, 3, 6, 4), F(2, 3, 6, 3)), {}),
        ((F(2, 3, 6, 4), F(2, 3, 6, 4), F(2, 3, 6, 4)), {"is_causal": True}),
        ((F(2, 3, 5, 4), F(2, 3, 7, 4), F(2, 3, 7, 4)), {"is_causal": True, "scale": 0.7}),
        ((F(2, 2, 5, 4), F(2, 2, 6, 4), F(2, 2, 6, 3), B(5, 6)), {}),
        ((F(1, 2, 5, 4), F(1, 2, 6, 4), F(1, 2, 6, 4), F(2, 1, 6)), {"scale": 0.25}),
        ((F(2, 4, 5, 4), F(2, 2, 5, 4), F(2, 2, 5, 3)), {"enable_gqa": True, "is_causal": True}),
        ((F(5, 8), F(6, 8), F(6, 2)), {"scale": -0.5}),
    ],
}
