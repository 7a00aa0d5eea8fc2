"""A sharded program against its single-device original (`solar verify --world-size N`): each rank's
shard of a tensor cut from the original's (a split per dimension over mesh axes), every rank run
on the interpreter, and each rank's outputs compared with its shard of the original's outputs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from solar.errors import UsageError
from solar.frontends.compare import FULL_BUDGET, program_tolerance, relative_error
from solar.ir.collectives import Sharded, run_ranks, verify_sharded
from solar.ir.interp import program_cost

#: How a tensor is cut: per dimension, the mesh axes it is split over (row-major over those axes);
#: () for a dimension every rank holds whole.
Split = tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class RankCheck:
    """Rank `rank`'s output `what` (its shape `shape`) against its shard of the original's."""

    rank: int
    what: str
    shape: tuple[int, ...]
    error: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.error <= self.tolerance

    def line(self) -> str:
        result = "ok" if self.ok else "MISMATCH"
        return (f"rank {self.rank} {self.what} {list(self.shape)}: rel. error {self.error:.2e} "
                f"(tolerance {self.tolerance:.0e}) {result}")


@dataclass(frozen=True, slots=True)
class ShardedCheck:
    program: str
    world: int
    mesh: tuple[int, ...]
    checks: tuple[RankCheck, ...]

    @property
    def bad(self) -> tuple[RankCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)


def coords(rank: int, mesh: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(rank, tuple(mesh)))


def shard(full: np.ndarray, split: Split, mesh: Sequence[int], rank: int) -> np.ndarray:
    """Rank `rank`'s block of `full` (dimensions past `split`'s length are whole)."""
    at = coords(rank, mesh)
    index = []
    for d, size in enumerate(full.shape):
        axes = split[d] if d < len(split) else ()
        parts = math.prod(mesh[a] for a in axes)
        k = 0
        for a in axes:
            k = k * mesh[a] + at[a]
        step = size // parts
        index.append(slice(k * step, (k + 1) * step))
    return full[tuple(index)]


def split_shape(shape: Sequence[int], split: Split, mesh: Sequence[int]) -> tuple[int, ...] | None:
    """The shape of one rank's block of a tensor of `shape` (None where a dimension does not split
    evenly)."""
    out = []
    for d, size in enumerate(shape):
        parts = math.prod(mesh[a] for a in (split[d] if d < len(split) else ()))
        if size % parts:
            return None
        out.append(size // parts)
    return tuple(out)


def check_budget(sharded: Sharded, path: str) -> None:
    cost = program_cost(sharded.program) * sharded.world
    if cost > FULL_BUDGET:
        raise UsageError(
            f"{path}: {sharded.world} ranks of this program are {cost:.2g} interpreter steps, over the "
            f"budget of {FULL_BUDGET:.0e}; define get_verify_inputs() (and get_verify_init_inputs()) "
            "with smaller sizes for verify"
        )


def fitted(name: str, full: np.ndarray, split: Split, mesh: Sequence[int], want: Sequence[int], path: str) -> Split:
    """`split`, checked against the rank program's shape `want` of tensor `name` (the program may
    hold a tensor in a row-major reshape of the user's shape)."""
    got = split_shape(full.shape, split, mesh)
    if got is None or math.prod(got) != math.prod(want):
        cut = f"cut to {list(got)}" if got is not None else "does not split evenly"
        raise UsageError(
            f"{path}: {name} is {list(want)} on a rank but {list(full.shape)} in the single-device program "
            f"({cut} by its split); declare how {name} is split over the ranks"
        )
    return split


def run_checks(
    name: str, sharded: Sharded, mesh: Sequence[int], feeds: Sequence[Mapping[str, np.ndarray]],
    expected: Sequence[Mapping[str, tuple[str, np.ndarray]]],
) -> ShardedCheck:
    """Run every rank on `feeds` (per rank: IR tensor -> value) and compare each output the rank's
    `expected` names (IR output -> (what the user calls it, its value on that rank))."""
    verify_sharded(sharded)
    tolerance = program_tolerance(sharded.program)
    checks = []
    for rank, outs in enumerate(run_ranks(sharded, feeds)):
        for tensor, (what, want) in expected[rank].items():
            got = outs[tensor]
            checks.append(RankCheck(rank, what, tuple(got.shape), relative_error(got, want), tolerance))
    return ShardedCheck(name, sharded.world, tuple(mesh), tuple(checks))
