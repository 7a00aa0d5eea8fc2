"""Cases for solar/frontends/torch/lowerings/embedding_bag.py: offsets with an empty bag, with and
without the last offset, per-sample weights, every mode (offsets are given tensors: bags are
data). Fixed-size bags (2-D indices) are checked end to end in tests/frontends/test_torch_ops.py."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F
from tests.frontends.lowering_cases.indexing import Ix

aten = torch.ops.aten

OFF = torch.tensor([0, 2, 2, 5])
OFF_LAST = torch.tensor([0, 3, 3, 6, 7])
CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten._embedding_bag.default: [((F(8, 5), Ix(7), OFF, False, mode), {}) for mode in (0, 1, 2)]
    + [((F(8, 5), Ix(7), OFF_LAST, False, mode, False, None, True), {}) for mode in (0, 1, 2)]
    + [((F(8, 5), Ix(7), OFF, False, 0, False, F(7)), {})],
}
