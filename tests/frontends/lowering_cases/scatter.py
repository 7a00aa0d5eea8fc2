"""Cases for solar/frontends/torch/lowerings/scatter.py. Index tensors are `Ix(...)` (values 0..4,
so indexed dims are >= 6); repeated indices occur, so accumulating forms combine several values
into one element, and assignments (PyTorch's CPU kernels write in order: the last one stays) are
compared as such."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import B, F
from tests.frontends.lowering_cases.indexing import Ix

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.scatter.src: [
        ((F(3, 6), 1, Ix(3, 2), F(3, 4)), {}),
        ((F(6, 2, 3), 0, Ix(2, 2, 3), F(2, 2, 3)), {}),
    ],
    aten.scatter.value: [((F(3, 6), 1, Ix(3, 2), 1.5), {})],
    aten.scatter_add.default: [
        ((F(3, 6), 1, Ix(3, 5), F(3, 5)), {}),
        ((F(7, 2), 0, Ix(9, 2), F(9, 3)), {}),
    ],
    aten.scatter.reduce: [
        ((F(3, 6), 1, Ix(3, 4), F(3, 4)), {"reduce": "add"}),
        ((F(3, 6), 1, Ix(3, 4), F(3, 4)), {"reduce": "multiply"}),
    ],
    aten.scatter.value_reduce: [((F(3, 6), 1, Ix(3, 4), 2.0), {"reduce": "multiply"})],
    aten.scatter_reduce.two: [
        ((F(3, 6), 1, Ix(3, 5), F(3, 5), reduce), {"include_self": inc})
        for reduce in ("sum", "prod", "mean", "amax", "amin")
        for inc in (True, False)
    ],
    aten.index_put.default: [
        ((F(6, 3), [Ix(4)], F(4, 3)), {"accumulate": True}),
        ((F(6, 3), [Ix(4)], F(3)), {"accumulate": True}),
        ((F(3, 6, 7), [None, Ix(2, 3), Ix(3)], F(3, 2, 3)), {"accumulate": True}),
        ((F(6, 3, 7), [Ix(4), None, Ix(4)], F(4, 3)), {"accumulate": True}),
        ((F(6, 3), [Ix(2)], F(2, 3)), {}),
        ((F(3, 4), [B(3, 4)], F()), {}),
        ((F(3, 4), [B(3)], F()), {"accumulate": True}),
    ],
    aten.index_add.default: [
        ((F(6, 3), 0, Ix(4), F(4, 3)), {}),
        ((F(2, 7), 1, Ix(5), F(2, 5)), {"alpha": 0.5}),
    ],
    aten.index_copy.default: [((F(6, 3), 0, Ix(1), F(1, 3)), {})],
    aten.slice_scatter.default: [
        ((F(4, 9), F(4, 3)), {"dim": 1, "start": 2, "end": 8, "step": 2}),
        ((F(6, 3), F(2, 3)), {"dim": 0, "start": -2}),
        ((F(5, 4), F(5, 4)), {}),
    ],
    aten.select_scatter.default: [
        ((F(3, 5, 2), F(3, 2), 1, 4), {}),
        ((F(4, 3), F(3), 0, -1), {}),
    ],
    aten.index_fill.int_Scalar: [((F(2, 7), 1, Ix(3), -1.0), {})],
    aten.masked_scatter.default: [
        ((F(3, 4), B(3, 4), F(12)), {}),
        ((F(3, 4), B(4), F(15)), {}),
        ((F(2, 3), B(2, 3), F(2, 3)), {}),
    ],
    # the source's gradient: sizes at, above (the tail gets 0) and the mask broadcast
    aten.masked_scatter_backward.default: [
        ((F(3, 4), B(3, 4), [12]), {}),
        ((F(3, 4), B(3, 4), [4, 5]), {}),
        ((F(3, 4), B(4), [3, 4]), {}),
    ],
}
