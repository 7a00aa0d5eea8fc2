"""Test cases for the PyTorch lowering table, one module per op family. Each module defines
`CASES: dict[OpOverload, list[(args, kwargs)]]` with tensors given as `T` specs; the test merges them
(an op in two modules is an error) and checks every table entry has at least one case."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class T:
    """A random input tensor of this shape and dtype (positive: strictly positive values)."""

    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    positive: bool = False
    transpose: bool = False  # a 2-D tensor in column-major layout (the transpose of a row-major one)


def B(*shape: int) -> T:
    return T(shape, torch.bool)


def P(*shape: int) -> T:
    return T(shape, positive=True)


def F(*shape: int) -> T:
    return T(shape)


@dataclass(frozen=True)
class Draw:
    """How to check a random op, whose values cannot match PyTorch's: the IR's output has the real
    op's shape and dtype, lies in [lo, hi] (None: unbounded), and its mean and standard deviation
    are within `tol` of `mean` / `std` (None: unchecked); `permutation`: the values are a
    permutation of 0..n-1. The same checks are applied to the real op's output, so a wrong
    specification fails too. A cases module lists these in `DRAWS: dict[op, Draw]`."""

    lo: float | None = None
    hi: float | None = None
    mean: float | None = None
    std: float | None = None
    tol: float = 0.05
    permutation: bool = False
