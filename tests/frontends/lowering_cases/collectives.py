"""Cases for solar/frontends/torch/lowerings/collectives.py: a collective's result depends on every
rank, so each is checked through whole sharded programs run on simulated ranks."""

from __future__ import annotations

from typing import Any

import torch

c10d = torch.ops._c10d_functional
WHY = "tests/frontends/test_distributed.py: sharded programs on simulated ranks reproduce the original"

BY_PROGRAM: dict[Any, str] = {
    op: WHY
    for op in (
        c10d.all_reduce.default, c10d.all_gather_into_tensor.default, c10d.reduce_scatter_tensor.default,
        c10d.all_to_all_single.default, c10d.wait_tensor.default,
    )
}
