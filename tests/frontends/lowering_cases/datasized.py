"""Cases for solar/frontends/torch/lowerings/datasized.py: the data that gives each op the size
the lowering holds, 0 rows (an all-false mask, all-zero repeats)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

NONE = torch.zeros(3, 4, dtype=torch.bool)

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.nonzero.default: [((NONE,), {}), ((torch.zeros(5),), {})],
    aten.masked_select.default: [((F(3, 4), NONE), {})],
    aten.repeat_interleave.Tensor: [((torch.zeros(4, dtype=torch.int64),), {})],
}

# Ops no non-empty input gives 0 rows (unique and bincount of n > 0 elements have at least one):
# checked through whole programs instead (tests/frontends/test_datasizes.py), each with the reason.
BY_PROGRAM: dict[Any, str] = {
    op: "at least one row on any non-empty input; the IR holds 0 rows"
    for op in (aten._unique2.default, aten.unique_dim.default, aten.unique_consecutive.default,
               aten.bincount.default)
}
