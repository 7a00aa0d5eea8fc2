"""Cases for solar/frontends/torch/lowerings/norms.py: batch norm in training (batch statistics,
running-statistic updates) and eval mode, 1d/2d/3d inputs, with and without affine parameters;
instance-norm-shaped calls; group norm."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F, P

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten._native_batch_norm_legit_functional.default: [
        ((F(4, 3, 5, 5), F(3), F(3), F(3), P(3), True, 0.1, 1e-5), {}),
        ((F(6, 4), None, None, F(4), P(4), True, 0.3, 1e-3), {}),
        ((F(2, 3, 4, 3, 5), F(3), F(3), F(3), P(3), True, 0.1, 1e-5), {}),
    ],
    aten._native_batch_norm_legit.no_stats: [
        ((F(1, 6, 4, 4), None, None, True, 0.1, 1e-5), {}),
        ((F(3, 2, 7), F(2), F(2), True, 0.1, 1e-5), {}),
    ],
    aten._native_batch_norm_legit_no_training.default: [
        ((F(4, 3, 5, 5), F(3), F(3), F(3), P(3), 0.1, 1e-5), {}),
        ((F(6, 4, 3), None, None, F(4), P(4), 0.1, 1e-3), {}),
    ],
    aten.native_group_norm.default: [
        ((F(2, 6, 4, 4), F(6), F(6), 2, 6, 16, 3, 1e-5), {}),
        ((F(3, 4, 5), None, None, 3, 4, 5, 4, 1e-5), {}),
        ((F(2, 8, 2, 3, 2), F(8), None, 2, 8, 12, 1, 1e-5), {}),
    ],
    aten.group_norm.default: [
        ((F(2, 6, 4, 4), 3, F(6), F(6)), {}),
        ((F(3, 4, 5), 2), {"eps": 1e-3}),
        ((F(2, 8, 2, 3, 2), 1, F(8)), {}),
    ],
}
