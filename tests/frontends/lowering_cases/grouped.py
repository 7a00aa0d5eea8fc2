"""Cases for solar/frontends/torch/lowerings/grouped.py. Offsets are real cumulative row counts
(one group empty, the last offset equal to the rows): what MoE routing gives a grouped GEMM."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F, T

aten = torch.ops.aten

_gen = torch.Generator().manual_seed(3)
IDS = torch.randint(0, 4, (2, 9), generator=_gen).float()  # expert ids as MoE passes them to histc
OFFS = torch.tensor([3, 3, 7, 10], dtype=torch.int32)

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.histc.default: [
        ((F(60),), {"bins": 7, "min": -1.5, "max": 2.0}),
        ((IDS, 4, 0, 3), {}),
        ((F(3, 5),), {"bins": 3, "min": 0.0, "max": 0.5}),
        ((IDS // 4, 1, 0, 0), {}),  # one expert per rank: one bin, its range the data's
    ],
    aten._grouped_mm.default: [
        ((T((10, 16), torch.bfloat16), T((4, 16, 8), torch.bfloat16), OFFS), {}),
        ((T((3, 4, 16), torch.bfloat16), T((3, 16, 8), torch.bfloat16)), {}),
    ],
}

try:  # transformers' fallback grouped GEMM exists once transformers' MoE module is imported
    import solar.frontends.torch  # noqa: F401  (before transformers: see frontends/torch/libraries.py)
    import transformers.integrations.moe  # noqa: F401

    CASES[torch.ops.transformers.grouped_mm_fallback.default] = [
        ((F(10, 6), F(4, 6, 5), OFFS), {}),
    ]
    # the gradients of the input and of each group's weight (group 1 gets no row: its slice is 0)
    CASES[torch.ops.transformers.grouped_mm_fallback_backward.default] = [
        ((F(10, 6), F(4, 6, 5), OFFS, F(10, 5)), {}),
    ]
except ImportError:  # pragma: no cover - transformers is in the dev set
    pass
