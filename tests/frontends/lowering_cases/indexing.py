"""Cases for solar/frontends/torch/lowerings/indexing.py. Index tensors are `Ix(...)`: small
non-negative integers (|randn| + 0.1 truncated: 0..3, rarely 4), so every indexed dim is >= 6."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F, T

aten = torch.ops.aten


def Ix(*shape: int) -> T:
    return T(shape, torch.int64, positive=True)


CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.embedding.default: [((F(8, 5), Ix(3, 4)), {}), ((F(6, 3), Ix(7)), {"padding_idx": 0})],
    aten.gather.default: [((F(4, 6), 1, Ix(4, 3)), {}), ((F(6, 3, 2), 0, Ix(2, 3, 2)), {})],
    aten.index_select.default: [((F(6, 5), 0, Ix(4)), {}), ((F(3, 7, 2), 1, Ix(9)), {})],
    aten.index.Tensor: [
        ((F(6, 5), [Ix(4)]), {}),
        ((F(3, 6, 7), [None, Ix(2, 3), Ix(3)]), {}),
        ((F(6, 3, 7), [Ix(4), None, Ix(4)]), {}),
        ((F(3, 6), [None, Ix(2, 2)]), {}),
        ((F(3, 6), [torch.zeros(3, dtype=torch.bool)]), {}),  # a mask selecting no row
    ],
}
