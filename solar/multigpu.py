"""Sharded programs on a system: one rank's program bounded on the system's GPU, its collectives on
the system's links, and the slowest rank's levels (solar.backends.collectives)."""

from __future__ import annotations

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import Analysis, analyze
from solar.backends.collectives import RankBound, slowest_rank
from solar.hardware.systems import SystemSpec
from solar.ir.collectives import Sharded, full_bytes


def analyze_sharded(
    sharded: Sharded, system: SystemSpec, assumptions: Assumptions | None = None, analysis: Analysis | None = None
) -> RankBound:
    """The slowest rank's bounds of `sharded` on `system` (`analysis`: the rank program's, when the
    caller has it already)."""
    rank = analysis or analyze(sharded.program, system.gpu_spec, assumptions or Assumptions())
    moves = [(c, full_bytes(c, sharded.program)) for c in sharded.collectives]
    return slowest_rank(rank, moves, sharded.world, system)
