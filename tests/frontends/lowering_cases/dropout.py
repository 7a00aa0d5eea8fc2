"""Cases for solar/frontends/torch/lowerings/dropout.py: the random ops at the settings where they
are deterministic (eval mode, p = 0, p = 1; tests/frontends/test_torch_coverage.py checks the
random settings by their invariants)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.native_dropout.default: [
        ((F(4, 5), 0.3, False), {}),
        ((F(4, 5), 0.0, True), {}),
        ((F(4, 5), 1.0, True), {}),
    ],
    aten.bernoulli.p: [((F(4, 5), 0.0), {}), ((F(4, 5), 1.0), {})],
}
