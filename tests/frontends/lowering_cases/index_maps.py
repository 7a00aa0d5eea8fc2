"""Cases for solar/frontends/torch/lowerings/index_maps.py: every padding mode (1–3 dims,
asymmetric, cropping), flip, roll (with and without dims, negative and large shifts), diagonals
and triangles with offsets."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.constant_pad_nd.default: [
        ((F(2, 3, 4, 5), [1, 2, 0, 1]), {}),
        ((F(2, 3, 4, 5), [1, 1, 2, 0, 1, 1], 0.5), {}),
        ((F(3, 6), [-1, 2]), {}),
    ],
    aten.pad.default: [
        ((F(2, 3, 4, 5), [1, 2, 0, 3], "reflect"), {}),
        ((F(2, 3, 7), [3, 2], "reflect"), {}),
        ((F(1, 2, 3, 4, 5), [1, 1, 2, 1, 1, 2], "reflect"), {}),
        ((F(2, 3, 4, 5), [1, 2, 3, 0], "replicate"), {}),
        ((F(1, 2, 3, 4, 3), [2, 1, 1, 1, 0, 2], "replicate"), {}),
        ((F(2, 3, 4, 5), [1, 2, 0, 3], "circular"), {}),
        ((F(2, 3, 6), [2, 4], "circular"), {}),
        ((F(2, 3, 4, 5), [1, 2, 2, 1], "constant", 1.5), {}),
        ((F(2, 3, 4, 5), [1, 0]), {}),
    ],
    aten.flip.default: [
        ((F(3, 4, 5), [0, 2]), {}),
        (
            (
                F(
                    6,
                ),
                [-1],
            ),
            {},
        ),
    ],
    aten.roll.default: [
        ((F(3, 7), [2], [1]), {}),
        ((F(3, 7), [-9, 1], [1, 0]), {}),
        ((F(3, 4), [5]), {}),
    ],
    aten.diagonal.default: [((F(4, 6),), {}), ((F(4, 6), 2), {}), ((F(2, 5, 3, 4), -1, 1, 3), {})],
    aten.diag_embed.default: [((F(2, 4),), {}), ((F(2, 4), 1), {}), ((F(3, 2), -2, 0, 2), {})],
    aten.diag.default: [
        (
            (
                F(
                    5,
                ),
            ),
            {},
        ),
        (
            (
                F(
                    4,
                ),
                -1,
            ),
            {},
        ),
        ((F(4, 6), 1), {}),
    ],
    aten.tril.default: [((F(5, 5),), {}), ((F(2, 4, 6), 1), {}), ((F(6, 4), -2), {})],
    aten.triu.default: [((F(5, 5),), {}), ((F(2, 4, 6), -1), {}), ((F(6, 4), 2), {})],
}
