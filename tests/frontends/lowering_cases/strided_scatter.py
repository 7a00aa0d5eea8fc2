"""Cases for solar/frontends/torch/lowerings/strided_scatter.py: windows covering the whole base
(in order, permuted, with size-1 dims of any stride) and partial windows (a block, a stride-3
run, an offset); the undefined buffers of new_empty / new_empty_strided."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import Draw, F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.as_strided_scatter.default: [
        ((F(6), F(6), [6], [1], 0), {}),
        ((F(2, 3, 4), F(2, 4, 3), [2, 4, 3], [12, 1, 4]), {}),
        ((F(8), F(1, 8, 1, 1), [1, 8, 1, 1], [8, 1, 8, 8], 0), {}),
        ((F(4, 6), F(2, 3), [2, 3], [6, 1], 7), {}),
        ((F(10), F(3), [3], [3], 1), {}),
        ((F(3, 4, 5), F(2, 5), [2, 5], [1, 4], 20), {}),
    ],
    aten.new_empty.default: [((F(3, 4), [2, 5]), {})],
    aten.new_empty_strided.default: [((F(3, 4), [2, 5], [5, 1]), {})],
}
DRAWS: dict[Any, Draw] = {aten.new_empty.default: Draw(), aten.new_empty_strided.default: Draw()}
