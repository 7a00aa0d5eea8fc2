"""Cases for solar/frontends/torch/lowerings/reductions.py."""

from __future__ import annotations

import math
from typing import Any

import torch

from tests.frontends.lowering_cases import B, F, P

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.sum.dim_IntList: [((F(3, 4, 5), [1]), {}), ((F(3, 4, 5), [0, 2], True), {})],
    aten.sum.default: [((F(3, 4, 5),), {})],
    aten.mean.dim: [((F(3, 4, 5), [-1]), {}), ((F(3, 4, 5), [0, 1], True), {})],
    aten.mean.default: [((F(3, 4, 5),), {})],
    aten.amax.default: [((F(3, 4, 5), [1]), {}), ((F(3, 4, 5), [0, 2], True), {})],
    aten.amin.default: [((F(3, 4, 5), [2]), {})],
    aten.argmax.default: [((F(3, 7), 1), {}), ((F(3, 7), 0, True), {}), ((F(3, 4, 5),), {})],
    aten.argmin.default: [((F(3, 7), -1), {}), ((F(2, 3, 4), None, True), {})],
    aten.max.dim: [((F(3, 7), 1), {}), ((F(3, 4, 5), 0, True), {})],
    aten.min.dim: [((F(3, 7), 1), {}), ((F(3, 4, 5), 2, True), {})],
    aten.max.default: [((F(3, 7),), {})],
    aten.min.default: [((F(2, 3, 4),), {})],
    aten.prod.dim_int: [((F(3, 6), 1), {}), ((F(3, 6), 0, True), {}), ((B(3, 6), 1), {})],
    aten.prod.default: [((F(2, 5),), {})],
    aten.var.correction: [
        ((F(4, 9), [1]), {}),
        ((F(4, 9), [0, 1]), {"correction": 0, "keepdim": True}),
        ((F(3, 4, 5), None), {"correction": 2}),
    ],
    aten.var_mean.correction: [
        ((F(4, 9), [1]), {"correction": 0}),
        ((F(2, 3, 8), [0, 2]), {"keepdim": True}),
    ],
    aten.linalg_vector_norm.default: [
        ((F(4, 6),), {}),
        ((F(4, 6), 2, [1]), {}),
        ((F(4, 6), 1, [1], True), {}),
        ((F(4, 6), math.inf, [0]), {}),
        ((F(4, 6), -math.inf, [1]), {}),
        ((F(4, 6), 0, [1]), {}),
        ((F(4, 6), 3, [1]), {}),
        ((P(4, 6), 0.5, [0, 1]), {}),
    ],
    aten.any.dim: [((B(3, 5), 1), {}), ((F(3, 5), 0, True), {})],
    aten.any.dims: [((B(3, 4, 5), [0, 2]), {})],
    aten.any.default: [((B(3, 5),), {})],
    aten.all.dim: [((B(6, 2), 1), {})],
    aten.all.dims: [((B(3, 4, 5), [1, 2], True), {})],
    aten.all.default: [((B(2),), {}), ((B(3, 5),), {})],
    aten._is_all_true.default: [((B(3, 5),), {}), ((torch.ones(4, dtype=torch.bool),), {})],
}
