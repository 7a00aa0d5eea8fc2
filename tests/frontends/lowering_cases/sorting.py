"""Cases for solar/frontends/torch/lowerings/sorting.py: random float keys have no ties, so
positions compare exactly with PyTorch's; integer keys with ties are sorted with stable=True,
whose tie order (the lower position first) is the IR's."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F, T

aten = torch.ops.aten

_gen = torch.Generator().manual_seed(7)
TIES = torch.randint(0, 3, (5, 9), generator=_gen)  # many equal keys per row
SPECIAL = torch.tensor(
    [1.0, float("nan"), 3.0, float("inf"), -1.0, 0.0, float("nan"), -float("inf")]
)

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.topk.default: [
        ((F(4, 8), 2), {}),
        ((F(4, 8), 3, 0, False), {}),
        ((F(6, 5, 3), 5, 1), {}),
        ((F(6, 5, 3), 1, 1), {"sorted": False}),  # k > 1 unsorted: PyTorch's order is its own
        ((T((3, 8), torch.bfloat16), 1), {}),
        ((F(5, 1), 1), {}),
    ],
    aten.sort.default: [
        ((F(4, 7),), {}),
        ((F(4, 7), 0, True), {}),
        ((F(3, 4, 5), 1), {}),
    ],
    aten.sort.stable: [
        ((TIES,), {"stable": True}),
        ((TIES,), {"stable": True, "descending": True, "dim": 0}),
        ((SPECIAL,), {"stable": True}),
        ((SPECIAL,), {"stable": True, "descending": True}),
    ],
    aten.kthvalue.default: [
        ((F(4, 7), 3), {}),
        ((F(4, 7), 1, 0, True), {}),
    ],
}
