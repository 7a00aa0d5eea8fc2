"""Cases for solar/frontends/torch/lowerings/grid_sample.py: bilinear and nearest, zeros and border
padding, both align_corners; the grid's randn values reach outside [-1, 1], so padding matters."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.grid_sampler_2d.default: [
        ((F(2, 3, 5, 6), F(2, 4, 3, 2), mode, pad, align), {})
        for mode in (0, 1)
        for pad in (0, 1)
        for align in (False, True)
    ],
}
