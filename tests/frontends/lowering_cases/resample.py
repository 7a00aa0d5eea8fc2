"""Cases for solar/frontends/torch/lowerings/resample.py: sizes and scale factors, up and down,
align_corners both ways, 1-3 dims."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.upsample_nearest1d.vec: [((F(1, 2, 5), [12], None), {}), ((F(1, 2, 7), None, [0.5]), {})],
    aten.upsample_nearest2d.vec: [
        ((F(2, 3, 4, 5), None, [2.0, 2.0]), {}),
        ((F(1, 2, 4, 6), [7, 3], None), {}),
        ((F(1, 2, 4, 6), None, [1.5, 0.5]), {}),
    ],
    aten.upsample_nearest3d.vec: [((F(1, 2, 2, 3, 4), [4, 5, 4], None), {})],
    aten._upsample_nearest_exact1d.vec: [((F(1, 2, 5), [12], None), {})],
    aten._upsample_nearest_exact2d.vec: [
        ((F(1, 2, 4, 6), [7, 3], None), {}),
        ((F(1, 1, 3, 3), None, [2.0, 3.0]), {}),
    ],
    aten._upsample_nearest_exact3d.vec: [((F(1, 1, 2, 3, 4), [3, 5, 2], None), {})],
    aten.upsample_linear1d.vec: [
        ((F(1, 2, 5), [12], False, None), {}),
        ((F(1, 2, 5), [12], True, None), {}),
        ((F(2, 1, 9), [4], False, None), {}),
    ],
    aten.upsample_bilinear2d.vec: [
        ((F(2, 3, 4, 5), None, False, [2.0, 2.0]), {}),
        ((F(1, 2, 4, 6), [7, 3], True, None), {}),
        ((F(1, 2, 4, 6), [7, 3], False, None), {}),
        ((F(1, 2, 3, 4), None, False, [1.5, 2.5]), {}),
        ((F(1, 1, 1, 4), [3, 1], True, None), {}),
    ],
    aten.upsample_trilinear3d.vec: [
        ((F(1, 2, 2, 3, 4), [4, 5, 3], False, None), {}),
        ((F(1, 1, 3, 2, 2), [5, 3, 4], True, None), {}),
    ],
}
