"""Lower bounds on collectives and on sharded programs: the bytes each GPU, and each node's NICs,
must move for a collective with the most capable algorithm the system offers, plus a latency floor;
communication as a third resource beside compute and DRAM (docs/BOUNDS.md, Several GPUs).

Rank r sits on node r // gpus_per_node. S is the collective's full buffer: the input of all-reduce,
reduce-scatter, all-to-all and send/recv, the output of all-gather (nccl-tests' size)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from solar.backends.bounds import Analysis
from solar.errors import UsageError
from solar.hardware.systems import SystemSpec
from solar.ir.collectives import INPUT_PREFIX, ORIGIN_PREFIX, Collective, Kind


def gpu_factor(kind: Kind, n: int, in_network_reduction: bool, shift: int = 1) -> Fraction:
    """Bytes each GPU of a group of n must send or receive (whichever is larger), as a fraction of
    S. All-reduce: 2(n-1)/n without a reducing switch (Patarasuk and Yuan's bound for reductions
    done at the endpoints), S with one (every output element needs one incoming value, every input
    element one outgoing); all-gather, reduce-scatter, all-to-all: (n-1)/n; send/recv: 1."""
    if n <= 1:
        return Fraction(0)
    if kind is Kind.ALL_REDUCE:
        return Fraction(1) if in_network_reduction else Fraction(2 * (n - 1), n)
    if kind is Kind.SEND_RECV:
        return Fraction(0) if shift % n == 0 else Fraction(1)
    return Fraction(n - 1, n)


def node_bytes(
    c: Collective, group: tuple[int, ...], node: int, per_node: int, reducing: bool, s: Fraction
) -> Fraction:
    """Bytes that must cross the boundary of `node` (in or out, whichever is larger) for one
    group's collective: the node's members count as one endpoint, so only data produced outside
    it (or needed outside it) crosses."""
    n = len(group)
    here = [p for p, r in enumerate(group) if r // per_node == node]
    m, nodes = len(here), len({r // per_node for r in group})
    if m == 0 or m == n:
        return Fraction(0)
    if c.kind is Kind.ALL_REDUCE:
        return Fraction(s) if reducing else Fraction(2 * (nodes - 1) * s, nodes)
    if c.kind in (Kind.ALL_GATHER, Kind.REDUCE_SCATTER):
        return Fraction((n - m) * s, n)
    if c.kind is Kind.ALL_TO_ALL:
        return Fraction(m * (n - m) * s, n)
    sources = sum(1 for p in here if group[(p - c.shift) % n] // per_node != node)
    return Fraction(sources * s)


@dataclass(frozen=True, slots=True)
class CollectiveBound:
    """One collective as rank `rank` sees it: the bytes its links and its node's NICs must carry,
    the seconds each takes, the latency floor, and the bound (their max, plus the floor)."""

    kind: Kind
    out: str
    group_size: int
    full_bytes: float
    gpu_bytes: float
    node_bytes: float
    gpu_seconds: float
    node_seconds: float
    latency_seconds: float
    seconds: float
    binds: str  # "gpu links", "node NICs" or "latency"


@dataclass(frozen=True, slots=True)
class RankBound:
    """One rank's bounds: compute and memory (of its own program), communication, and the levels:
    fused and cache-aware take the max with communication, unfused adds it."""

    rank: int
    analysis: Analysis
    collectives: tuple[CollectiveBound, ...]
    comm_fused_seconds: float
    comm_unfused_seconds: float
    comm_binds: str
    fused_seconds: float
    cache_aware_seconds: float
    unfused_seconds: float


def _gpu_rate(system: SystemSpec) -> float:
    """Bytes/s one GPU can move in one direction: its scale-up links, plus its NIC where the system
    has one (a GPU may receive through both at once; counting both keeps the bound sound)."""
    out = system.scale_out
    return system.scale_up.bandwidth_bytes_per_s_per_direction.value + (
        out.bandwidth_bytes_per_s_per_direction.value if out else 0.0
    )


def collective_bounds(c: Collective, full: float, system: SystemSpec) -> dict[int, CollectiveBound]:
    """The bound of `c`, whose full buffer is `full` bytes, for every rank of the system."""
    s = Fraction(full)
    per_node, up, out = system.per_node, system.scale_up, system.scale_out
    crossing: dict[int, Fraction] = defaultdict(Fraction)  # node -> bytes over its NICs, all groups
    spans = {g: len({r // per_node for r in g}) > 1 for g in c.groups}
    reducing = {g: up.in_network_reduction.value or (spans[g] and bool(out and out.in_network_reduction.value))
                for g in c.groups}
    for g in c.groups:
        if spans[g]:
            for node in {r // per_node for r in g}:
                crossing[node] += node_bytes(c, g, node, per_node, reducing[g], s)
    rate = _gpu_rate(system)
    result = {}
    for g in c.groups:
        gpu = float(gpu_factor(c.kind, len(g), reducing[g], c.shift) * s)
        latency = 0.0 if gpu == 0 else up.latency_seconds.value
        if spans[g] and out is not None and gpu:
            latency = max(latency, out.latency_seconds.value)
        for r in g:
            nb = float(crossing[r // per_node])
            nic = out.bandwidth_bytes_per_s_per_direction.value * per_node if out else 1.0
            gs, ns = gpu / rate, nb / nic
            binds = "node NICs" if ns > gs else "gpu links" if gs > 0 else "latency"
            result[r] = CollectiveBound(
                c.kind, c.out, len(g), float(s), gpu, nb, gs, ns, latency, max(gs, ns) + latency, binds
            )
    return result


def slowest_rank(
    analysis: Analysis, collectives: Sequence[tuple[Collective, float]], world: int, system: SystemSpec
) -> RankBound:
    """The slowest rank's bounds of a `world`-rank SPMD program whose one rank's program has
    `analysis` and whose collectives move (collective, S bytes): every rank runs the same program,
    so ranks differ only in where their groups sit."""
    if world > system.world:
        raise UsageError(
            f"the program has {world} ranks but {system.shown} has {system.world} GPUs; "
            "pass --nodes to add nodes, or a smaller --world-size"
        )
    per_rank = [collective_bounds(c, s, system) for c, s in collectives]
    ranks = (rank_bound(r, analysis, tuple(p[r] for p in per_rank), system) for r in range(world))
    return max(ranks, key=lambda b: (b.fused_seconds, b.unfused_seconds, -b.rank))


def rank_bound(r: int, a: Analysis, bounds: tuple[CollectiveBound, ...], system: SystemSpec) -> RankBound:
    rate = _gpu_rate(system)
    out = system.scale_out
    nic = out.bandwidth_bytes_per_s_per_direction.value * system.per_node if out else 1.0
    terms = {
        "gpu links": sum(b.gpu_bytes for b in bounds) / rate,
        "node NICs": sum(b.node_bytes for b in bounds) / nic,
        "latency": max((b.latency_seconds for b in bounds), default=0.0),
    }
    binds = max(terms, key=lambda k: terms[k]) if any(terms.values()) else "none"
    fused_comm = max(terms.values())
    unfused_comm = sum(b.seconds for b in bounds)
    # The statements of the collectives' kernels (local parts, argument copies) are rows of the
    # rank's unfused sum already; each such kernel takes at least the larger of its row and its
    # link time, and max(sum, sum) is at most the sum of the maxima.
    local = sum(op.seconds for op in a.ops if op.op.startswith((ORIGIN_PREFIX, INPUT_PREFIX)))
    cache = a.cache_aware.seconds if a.cache_aware else a.fused.seconds
    return RankBound(
        r, a, bounds, fused_comm, unfused_comm, binds,
        max(a.fused.seconds, fused_comm), max(cache, fused_comm), a.unfused.seconds - local + max(local, unfused_comm),
    )


@dataclass(frozen=True, slots=True)
class LinkNeed:
    """What a rank's links must carry for its fused bound to fit `target_seconds`: the per-GPU
    bandwidth per direction (scale-up and NIC together) and the per-GPU NIC bandwidth for what
    crosses nodes; `blocked_by` names a term that alone exceeds the target (then no bandwidth
    suffices)."""

    target_seconds: float
    gpu_bytes_per_s: float
    nic_bytes_per_s: float
    blocked_by: str | None


def link_need(b: RankBound, per_node: int, target_seconds: float) -> LinkNeed:
    """The least link bandwidths at which `b`'s fused bound is at most `target_seconds` (the
    communication terms are bytes over bandwidth, so they invert exactly)."""
    f = b.analysis.fused
    fixed = {
        "compute": f.compute_seconds, "DRAM": f.memory_seconds, "launch": f.launch_seconds,
        "latency": max((c.latency_seconds for c in b.collectives), default=0.0),
    }
    blocked = next((k for k, v in fixed.items() if v > target_seconds), None)
    gpu = sum(c.gpu_bytes for c in b.collectives) / target_seconds
    nic = sum(c.node_bytes for c in b.collectives) / (per_node * target_seconds)
    return LinkNeed(target_seconds, gpu, nic, blocked)
