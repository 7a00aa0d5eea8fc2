"""Sharded programs on a system: one rank's program bounded on the system's GPU, its collectives on
the system's links, and the slowest rank's levels (solar.backends.collectives); pipelines of such
stages and the link bandwidth they need (solar.backends.pipeline)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import Analysis, analyze, analyze_graph
from solar.backends.collectives import RankBound, link_need, slowest_rank
from solar.backends.pipeline import PipelineBound, pipeline_bound, pipeline_need, stage_bound
from solar.errors import UsageError
from solar.hardware.systems import SystemSpec
from solar.ir.collectives import Sharded, full_bytes, sharded_of, verify_sharded
from solar.ir.nodes import Role

__all__ = ["analyze_pipeline", "analyze_sharded", "link_need", "pipeline_need", "verify_sharded"]


def analyze_sharded(
    sharded: Sharded, system: SystemSpec, assumptions: Assumptions | None = None, analysis: Analysis | None = None
) -> RankBound:
    """The slowest rank's bounds of `sharded` on `system` (`analysis`: the rank program's, when the
    caller has it already)."""
    rank = analysis or analyze(sharded.program, system.gpu_spec, assumptions or Assumptions())
    moves = [(c, full_bytes(c, sharded.program)) for c in sharded.collectives]
    return slowest_rank(rank, moves, sharded.world, system)


def analyze_pipeline(
    stages: Sequence[Any], tp: int, dp: int, microbatches: int, system: SystemSpec,
    assumptions: Assumptions | None = None,
) -> PipelineBound:
    """The pipeline bound on `system` for `microbatches` micro-batches of `stages` (in order, each
    with `loaded`: rank 0's program of its tensor-parallel group over tp x dp ranks, and `layers`;
    stages of one kind share one Loaded, analysed once); the hidden states sent between stages are
    the first stage's result (its last output)."""
    pp = len(stages)
    if tp * pp * dp > system.world:
        raise UsageError(
            f"the pipeline has {tp * pp * dp} ranks (tp {tp} x pp {pp} x dp {dp}) but {system.shown} has "
            f"{system.world} GPUs; pass --nodes to add nodes"
        )
    kinds = {id(s.loaded): s.loaded for s in stages}
    programs = {k: sharded_of(loaded.program, tp * dp) for k, loaded in kinds.items()}
    for sharded in programs.values():
        verify_sharded(sharded)
    analyses = {k: analyze_graph(loaded.graph, system.gpu_spec, assumptions or Assumptions()) for k, loaded in kinds.items()}
    first = stages[0].loaded.program
    out = first.with_role(Role.OUTPUT)[-1]  # the step's result after its cache writes
    hidden = float(first.numel(out.name) * out.dtype.bytes) if pp > 1 else 0.0
    bounds = []
    for s, stage in enumerate(stages):
        sharded = programs[id(stage.loaded)]
        moves = [(c, full_bytes(c, sharded.program)) for c in sharded.collectives]
        bounds.append(stage_bound(s, pp, tp, dp, analyses[id(stage.loaded)], moves, hidden, system))
    return pipeline_bound(bounds, [s.layers for s in stages], microbatches, hidden)
