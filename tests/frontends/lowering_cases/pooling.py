"""Cases for solar/frontends/torch/lowerings/pooling.py: padding, stride, dilation, ceil_mode (a
last window hanging over the edge), count_include_pad both ways, divisor_override, adaptive windows
that divide the input evenly and that overlap."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.max_pool2d_with_indices.default: [
        ((F(2, 3, 9, 9), [3, 3], [2, 2], [1, 1], [1, 1], True), {}),
        ((F(1, 2, 8, 7), [2, 3], [], [0, 1]), {}),
        ((F(1, 2, 11, 10), [3, 2], [2, 3], [1, 1], [2, 3], True), {}),
        ((F(3, 7, 7), [2, 2], [2, 2]), {}),
    ],
    aten.max_pool3d_with_indices.default: [
        ((F(1, 2, 5, 6, 7), [2, 3, 2], [2, 2, 1], [1, 1, 0], [1, 1, 2], True), {}),
    ],
    aten.avg_pool2d.default: [
        ((F(2, 3, 9, 9), [3, 3], [2, 2], [1, 1], True, False), {}),
        ((F(2, 3, 9, 9), [3, 3], [2, 2], [1, 1], True, True), {}),
        ((F(1, 2, 8, 7), [2, 3], [1, 2], [1, 0]), {}),
        ((F(1, 2, 8, 7), [3, 3], [2, 2], [1, 1], False, True, 5), {}),
        ((F(1, 2, 10, 10), [4, 4], [4, 4]), {}),
    ],
    aten.avg_pool3d.default: [
        ((F(1, 2, 5, 6, 7), [2, 3, 3], [2, 2, 2], [1, 1, 1], True, False), {}),
        ((F(1, 2, 4, 4, 4), [2, 2, 2]), {}),
    ],
    aten._adaptive_avg_pool2d.default: [
        ((F(2, 3, 8, 8), [4, 4]), {}),
        ((F(2, 3, 7, 10), [3, 4]), {}),
        ((F(1, 2, 5, 5), [7, 7]), {}),
    ],
    aten._adaptive_avg_pool3d.default: [((F(1, 2, 5, 6, 4), [2, 3, 4]), {})],
    aten.adaptive_max_pool2d.default: [
        ((F(2, 3, 7, 10), [3, 4]), {}),
        ((F(1, 2, 8, 8), [2, 2]), {}),
    ],
    aten.adaptive_max_pool3d.default: [((F(1, 2, 5, 6, 4), [2, 3, 3]), {})],
}
