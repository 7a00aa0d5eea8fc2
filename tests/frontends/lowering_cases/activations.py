"""Cases for solar/frontends/torch/lowerings/activations.py (elu, and selu's constants)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.elu.default: [
        ((F(3, 5),), {}),
        ((F(3, 5), 0.5), {}),
        ((F(3, 5), 1.6732632423543772, 1.0507009873554805), {}),
        ((F(3, 5), 1.0, 1.0, 2.0), {}),
    ],
}
