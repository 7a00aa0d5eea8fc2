"""Lower bounds on pipeline-parallel programs: each stage's slowest rank with the hidden states it
receives and sends, and the forward schedule of M micro-batches over the stages with its bubble
(docs/BOUNDS.md, Several GPUs: pipelines).

Rank of replica d, stage s, tensor-parallel position t: d * P * tp + s * tp + t."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from solar.backends.bounds import Analysis
from solar.backends.collectives import CollectiveBound, RankBound, collective_bounds, rank_bound
from solar.errors import UsageError
from solar.hardware.systems import SystemSpec
from solar.ir.collectives import Collective, Kind


def rank_of(d: int, s: int, t: int, pp: int, tp: int) -> int:
    return d * pp * tp + s * tp + t


def placed(c: Collective, s: int, pp: int, tp: int) -> Collective:
    """A stage program's collective (traced over tp x dp ranks, rank d * tp + t) on the ranks of
    stage `s`."""
    groups = tuple(tuple(rank_of(r // tp, s, r % tp, pp, tp) for r in g) for g in c.groups)
    return replace(c, groups=groups)


def transfer_bounds(s: int, pp: int, tp: int, dp: int, hidden_bytes: float, system: SystemSpec) -> dict[int, CollectiveBound]:
    """Per rank of stage `s`, the movement of one micro-batch's hidden states (S = `hidden_bytes`)
    between stages: every rank of a later stage must receive S (it holds the whole residual stream
    and computed none of it); the ranks of an earlier stage together send S, at least S / tp each.
    A node that holds ranks of stage s but none of stage s - 1 of that replica takes in S over its
    NICs; one that holds none of stage s + 1's sends out its share, S over the stage's nodes."""
    per_node, up, out = system.per_node, system.scale_up, system.scale_out

    def nodes(d: int, k: int) -> set[int]:
        return {rank_of(d, k, t, pp, tp) // per_node for t in range(tp)}

    into: dict[int, float] = {}
    away: dict[int, float] = {}
    for d in range(dp):
        here = nodes(d, s)
        for n in here:
            if s > 0 and n not in nodes(d, s - 1):
                into[n] = into.get(n, 0.0) + hidden_bytes
            if s < pp - 1 and n not in nodes(d, s + 1):
                away[n] = away.get(n, 0.0) + hidden_bytes / len(here)
    gpu = max(hidden_bytes if s > 0 else 0.0, hidden_bytes / tp if s < pp - 1 else 0.0)
    rate = up.bandwidth_bytes_per_s_per_direction.value + (out.bandwidth_bytes_per_s_per_direction.value if out else 0.0)
    nic = out.bandwidth_bytes_per_s_per_direction.value * per_node if out else 1.0
    result = {}
    for d in range(dp):
        for t in range(tp):
            r = rank_of(d, s, t, pp, tp)
            n = r // per_node
            nb = max(into.get(n, 0.0), away.get(n, 0.0))
            latency = 0.0 if gpu == 0 else up.latency_seconds.value
            if nb and out is not None:
                latency = max(latency, out.latency_seconds.value)
            gs, ns = gpu / rate, nb / nic
            binds = "node NICs" if ns > gs else "gpu links" if gs > 0 else "latency"
            result[r] = CollectiveBound(Kind.SEND_RECV, f"stage {s} hidden states", pp, hidden_bytes, gpu, nb,
                                        gs, ns, latency, max(gs, ns) + latency, binds)
    return result


def stage_bound(
    s: int, pp: int, tp: int, dp: int, analysis: Analysis, moves: Sequence[tuple[Collective, float]],
    hidden_bytes: float, system: SystemSpec,
) -> RankBound:
    """The slowest rank of stage `s` for one micro-batch: its program (`analysis`), its tensor-
    parallel collectives (traced over tp x dp ranks) and the hidden states it receives and sends."""
    per = [collective_bounds(placed(c, s, pp, tp), full, system) for c, full in moves]
    transfer = transfer_bounds(s, pp, tp, dp, hidden_bytes, system) if pp > 1 else {}
    ranks = []
    for d in range(dp):
        for t in range(tp):
            r = rank_of(d, s, t, pp, tp)
            mine = tuple(p[r] for p in per) + ((transfer[r],) if transfer else ())
            ranks.append(rank_bound(r, analysis, mine, system))
    return max(ranks, key=lambda b: (b.fused_seconds, b.unfused_seconds, -b.rank))


def schedule(step_seconds: Sequence[float], microbatches: int) -> float:
    """A lower bound on M micro-batches through stages whose steps take at least `step_seconds`:
    micro-batch 1 passes every stage before the slowest one, that stage runs M steps one after
    another, and micro-batch M passes every stage after it: the sum of the steps plus (M - 1) of
    the slowest ((M + P - 1) steps where the stages are equal)."""
    return sum(step_seconds) + (microbatches - 1) * max(step_seconds)


@dataclass(frozen=True, slots=True)
class PipelineBound:
    """The slowest rank of each stage for one micro-batch, and the schedule's bound per level."""

    microbatches: int
    stages: tuple[RankBound, ...]
    layers: tuple[int, ...]
    hidden_bytes: float
    fused_seconds: float
    cache_aware_seconds: float
    unfused_seconds: float

    @property
    def slowest(self) -> int:
        return max(range(len(self.stages)), key=lambda s: self.stages[s].fused_seconds)


def pipeline_bound(stages: Sequence[RankBound], layers: Sequence[int], microbatches: int, hidden_bytes: float) -> PipelineBound:
    if not stages:
        raise UsageError("a pipeline needs at least one stage")
    return PipelineBound(
        microbatches, tuple(stages), tuple(layers), hidden_bytes,
        schedule([b.fused_seconds for b in stages], microbatches),
        schedule([b.cache_aware_seconds for b in stages], microbatches),
        schedule([b.unfused_seconds for b in stages], microbatches),
    )
