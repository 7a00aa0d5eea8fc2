"""Cases for solar/frontends/torch/lowerings/draws.py. Random outputs are checked by DRAWS (range
and statistics of 4096 samples: mean and std to within 0.05-0.1, about 4 standard errors), and the
uninitialised tensors by shape and dtype (their IR content is zeros, torch's is arbitrary: the
uninitialised ops are in DRAWS with no range)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import Draw, F

aten = torch.ops.aten

SHAPE = [64, 64]
CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.rand.default: [((SHAPE,), {}), (([4096],), {"dtype": torch.float16})],
    aten.randn.default: [((SHAPE,), {})],
    aten.rand_like.default: [((F(64, 64),), {})],
    aten.randn_like.default: [((F(64, 64),), {"dtype": torch.float64})],
    aten.randint.low: [((-3, 5, SHAPE), {})],
    aten.randint.default: [((10, SHAPE), {"dtype": torch.int32})],
    aten.randint_like.default: [((F(64, 64), 7), {})],
    aten.randint_like.low_dtype: [((F(64, 64), 2, 9), {})],
    aten.uniform.default: [((F(64, 64), -2.0, 4.0), {})],
    aten.normal_functional.default: [((F(64, 64), 1.5, 0.5), {})],
    aten.normal.float_float: [((-1.0, 2.0, SHAPE), {})],
    aten.normal.Tensor_float: [((torch.zeros(64, 64), 0.5), {})],
    aten.normal.float_Tensor: [((2.0, torch.ones(64, 64)), {})],
    aten.normal.Tensor_Tensor: [((torch.zeros(64, 64), torch.ones(64, 1)), {})],
    aten.randperm.default: [((10,), {}), ((64,), {}), ((1,), {})],
    aten.empty.memory_format: [(([3, 4],), {})],
    aten.empty_like.default: [((F(3, 4),), {})],
    aten.empty_strided.default: [(([3, 4], [4, 1]), {})],
    aten.empty_permuted.default: [(([3, 4, 5], [0, 2, 1]), {})],
}
_U = (1 / 12) ** 0.5  # std of U(0, 1)
DRAWS: dict[Any, Draw] = {
    aten.rand.default: Draw(0.0, 1.0, 0.5, _U),
    aten.rand_like.default: Draw(0.0, 1.0, 0.5, _U),
    aten.randn.default: Draw(mean=0.0, std=1.0, tol=0.1),
    aten.randn_like.default: Draw(mean=0.0, std=1.0, tol=0.1),
    aten.randint.low: Draw(-3, 4, 0.5, (63 / 12) ** 0.5, tol=0.15),
    aten.randint.default: Draw(0, 9, 4.5, (99 / 12) ** 0.5, tol=0.2),
    aten.randint_like.default: Draw(0, 6, 3.0, 2.0, tol=0.15),
    aten.randint_like.low_dtype: Draw(2, 8, 5.0, 2.0, tol=0.15),
    aten.uniform.default: Draw(-2.0, 4.0, 1.0, 6 * _U, tol=0.15),
    aten.normal_functional.default: Draw(mean=1.5, std=0.5),
    aten.normal.float_float: Draw(mean=-1.0, std=2.0, tol=0.2),
    aten.normal.Tensor_float: Draw(mean=0.0, std=0.5),
    aten.normal.float_Tensor: Draw(mean=2.0, std=1.0, tol=0.1),
    aten.normal.Tensor_Tensor: Draw(mean=0.0, std=1.0, tol=0.1),
    aten.randperm.default: Draw(permutation=True),
    aten.empty.memory_format: Draw(),
    aten.empty_like.default: Draw(),
    aten.empty_strided.default: Draw(),
    aten.empty_permuted.default: Draw(),
}
