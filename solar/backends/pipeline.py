"""Lower bounds on pipeline-parallel programs: each stage's slowest rank with the hidden states it
receives and sends, the forward schedule of M micro-batches over the stages with its bubble, and
the link bandwidth that schedule needs for a target time (docs/BOUNDS.md, Several GPUs: pipelines).

Rank of replica d, stage s, tensor-parallel position t: d * P * tp + s * tp + t."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from solar.backends.bounds import Analysis
from solar.backends.collectives import (
    CollectiveBound,
    LinkNeed,
    RankBound,
    collective_bounds,
    rank_bound,
)
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


def least_rate(fixed: Sequence[float], amount: Sequence[float], microbatches: int, target: float) -> float | None:
    """The least rate r (bytes/s) at which the schedule of stages taking max(fixed[s], amount[s] / r)
    fits `target` seconds: 0 when nothing moves, None when the fixed terms alone exceed it. In
    x = 1 / r the schedule is convex, increasing and piecewise linear, its pieces meeting where an
    amount term crosses a fixed one (x = fixed[t] / amount[s]), so it is solved exactly on the piece
    where it reaches the target."""

    def at(x: float) -> float:
        return schedule([max(f, a * x) for f, a in zip(fixed, amount)], microbatches)

    if at(0.0) > target:
        return None
    moving = [a for a in amount if a > 0]
    if not moving:
        return 0.0
    points = sorted({f / a for f in fixed for a in moving if f / a > 0})
    lo = 0.0
    for hi in points:
        if at(hi) > target:
            break
        lo = hi
    else:
        hi = 2 * lo if lo > 0 else 1.0  # past the last piece's start the schedule is linear in x
    x = lo + (target - at(lo)) * (hi - lo) / (at(hi) - at(lo))
    return 1.0 / x


def pipeline_need(p: PipelineBound, per_node: int, target_seconds: float) -> LinkNeed:
    """The least per-GPU link and NIC bandwidths at which `p`'s fused schedule fits `target_seconds`,
    each with the other link unlimited: both are necessary (the schedule only grows as either
    bandwidth falls), though at the two together the schedule may still be longer."""
    fixed = [max(b.analysis.fused.seconds, max((c.latency_seconds for c in b.collectives), default=0.0))
             for b in p.stages]
    gpu_bytes = [sum(c.gpu_bytes for c in b.collectives) for b in p.stages]
    nic_bytes = [sum(c.node_bytes for c in b.collectives) / per_node for b in p.stages]
    if schedule(fixed, p.microbatches) <= target_seconds:
        gpu = least_rate(fixed, gpu_bytes, p.microbatches, target_seconds)
        nic = least_rate(fixed, nic_bytes, p.microbatches, target_seconds)
        return LinkNeed(target_seconds, gpu or 0.0, nic or 0.0, None)
    # no bandwidth suffices: what the communication alone would need, and the term that blocks
    zero = [0.0] * len(fixed)
    gpu = least_rate(zero, gpu_bytes, p.microbatches, target_seconds) or 0.0
    nic = least_rate(zero, nic_bytes, p.microbatches, target_seconds) or 0.0
    slowest = p.stages[max(range(len(fixed)), key=fixed.__getitem__)]
    f = slowest.analysis.fused
    terms = {"compute": f.compute_seconds, "DRAM": f.memory_seconds, "launch": f.launch_seconds,
             "latency": max((c.latency_seconds for c in slowest.collectives), default=0.0)}
    return LinkNeed(target_seconds, gpu, nic, max(terms, key=terms.__getitem__))
