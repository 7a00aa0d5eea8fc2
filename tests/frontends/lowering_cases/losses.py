"""Cases for solar/frontends/torch/lowerings/losses.py. Targets of the embedding losses are ±1
(as PyTorch expects) and, in one case each, other values (PyTorch's definitions cover them too)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import B, F

aten = torch.ops.aten

SIGNS = torch.tensor(
    [[1.0, -1.0, -1.0, 1.0, 1.0], [-1.0, 1.0, -1.0, -1.0, 1.0], [1.0, 1.0, -1.0, 1.0, -1.0]]
)
ROW_SIGNS = torch.tensor([1.0, -1.0, -1.0, 1.0])

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.isnan.default: [
        ((F(3, 5),), {}),
        ((torch.tensor([1.0, float("nan"), -2.0, float("inf")]),), {}),
    ],
    aten.bitwise_not.default: [((B(3, 5),), {})],
    aten.hinge_embedding_loss.default: [
        ((F(3, 5), SIGNS), {}),
        ((F(3, 5), SIGNS, 0.5, 0), {}),
        ((F(3, 5), F(5), 2.0, 2), {}),
    ],
    aten.cosine_embedding_loss.default: [
        ((F(4, 6), F(4, 6), ROW_SIGNS), {}),
        ((F(4, 6), F(4, 6), ROW_SIGNS, 0.3, 0), {}),
        ((F(4, 6), F(1, 6), torch.tensor([1.0, 0.0, -1.0, 1.0]), -0.2, 2), {}),
        (
            (
                F(
                    6,
                ),
                F(
                    6,
                ),
                torch.tensor(-1.0),
                0.1,
            ),
            {},
        ),
    ],
}
