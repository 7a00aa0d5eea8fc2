"""The fused (speed-of-light), cache-aware and unfused (eager) bounds of an einsum graph on one GPU.

fused       = max(compute(all work), compulsory DRAM bytes / BW, t_launch)
cache_aware = max(compute(all work), cache-aware DRAM bytes / BW, t_launch)   (>= fused)
unfused     = Σ over op instances g of max(compute_g, bytes_g / BW, t_launch), plus any traffic
              every implementation moves (cache-aware bytes) that the per-kernel rules left
              unattributed (see `unfused_seconds`); >= cache_aware.

Each term is a lower bound (solar.backends.compute, solar.backends.memory); a kernel cannot
finish before its slowest resource, so the max of lower bounds is one; eager kernels run one after
another, so their bounds add.

t_launch applies to a program that runs at least one kernel, i.e. has a statement. A program with
none (`return x`, a view of an input: eager returns the input's storage, no kernel runs) has every
bound 0, so its fused bound never exceeds its unfused one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from solar.backends.algebra import FLOATS, Algebra, Num
from solar.backends.assumptions import Assumptions, Precision
from solar.backends.cache import Traffic, cache_aware_traffic
from solar.backends.compute import ComputeTime, compute_time
from solar.backends.levels import Level
from solar.backends.library import LibraryLevel, library_level
from solar.backends.memory import inplace_copies, op_groups, unfused_dram_bytes
from solar.backends.work import Work, graph_work, total
from solar.hardware import HardwareSpec
from solar.ir.nodes import Program
from solar.lift.einsum import EinsumGraph, lift

# "dispatch" (host-bound, eager_host) and "steps" (a recurrence's critical path) name the bottleneck
# of the levels built on these (solar.backends.dispatch, solar.backends.recurrence).
Bottleneck = Literal["compute", "memory", "launch", "dispatch", "steps"]
TERMS: tuple[Bottleneck, ...] = ("compute", "memory", "launch")  # order breaks ties
# What an op row says binds it: the resource of a memory or launch bottleneck; for compute, the
# unit and precision of the busiest work class (ComputeTime.binding_path).
BINDS: dict[Bottleneck, str | None] = {"compute": None, "memory": "dram", "launch": "launch"}


@dataclass(frozen=True, slots=True)
class Bound:
    """One bound: `seconds` and the terms it is the max (fused) or sum (unfused) of."""

    level: Level
    seconds: float
    bottleneck: Bottleneck
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float
    binding_unit: str | None


@dataclass(frozen=True, slots=True)
class OpCost:
    """One op instance (one eager kernel): its work, bytes and unfused time."""

    instance: int | None
    op: str
    source: str
    node_ids: tuple[int, ...]
    flops: int
    contraction_flops: int
    dram_bytes: float
    seconds: float
    bottleneck: Bottleneck
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float
    binding_unit: str | None
    binds: str = ""  # what binds this kernel: "tensor bf16", "fma fp32", "sfu", "dram", "launch"
    module: str = ""  # module path of the layer that called the op ("" at the top level)


@dataclass(frozen=True, slots=True)
class Totals:
    flops: int
    contraction_flops: int
    dram_bytes: float  # compulsory (fused) DRAM bytes
    unfused_dram_bytes: float  # bytes the eager execution must move (never below dram_bytes)
    cache_aware_dram_bytes: float = 0.0  # compulsory + forced by finite on-chip storage


@dataclass(frozen=True, slots=True)
class Analysis:
    totals: Totals
    fused: Bound
    unfused: Bound
    ops: tuple[OpCost, ...]
    spec: str
    assumptions: Assumptions
    cache_aware: Bound | None = None  # always set by analyze_graph
    traffic: Traffic | None = None  # the DRAM traffic per level behind `cache_aware`
    library: Bound | None = None  # always set by analyze_graph (solar.backends.library)
    library_level: LibraryLevel | None = None  # its kernels, rest and extra
    fastest_op_compute: tuple[float, ...] | None = None  # per op, under --precision fastest (exact runs)
    levels: tuple[Bound, ...] = ()  # further levels (recurrence, eager_host), in report order
    notes: tuple[str, ...] = ()  # one assumption line per further level, or why it is absent


def _dominant(terms: dict[Bottleneck, float]) -> Bottleneck:
    best = max(terms.values())
    return next(t for t in TERMS if terms[t] == best)


def _compute(work: Work, spec: HardwareSpec, a: Assumptions) -> ComputeTime:
    return compute_time(work, spec, a)


def analyze_graph(
    graph: EinsumGraph, spec: HardwareSpec, assumptions: Assumptions = Assumptions()
) -> Analysis:
    """Fused, cache-aware and unfused bounds of `graph` on `spec` under `assumptions`, with a row
    per op."""
    works = graph_work(graph)
    if "total_work" not in graph.memo:
        graph.memo["total_work"] = total(works.values())
    work = graph.memo["total_work"]
    bw = spec.dram_bytes_per_s
    launch = t_launch(spec, assumptions, len(graph) > 0)

    ct = _compute(work, spec, assumptions)
    traffic = cache_aware_traffic(graph, spec, assumptions.cache, assumptions.writeback)
    dram = traffic.compulsory_bytes
    fused = _max_bound(Level.FUSED, ct, dram / bw, launch)
    cache_aware = _max_bound(Level.CACHE_AWARE, ct, traffic.cache_aware_bytes / bw, launch)

    ops = _op_costs(graph, works, spec, assumptions, launch)
    unfused, unfused_bytes = _unfused(ops, traffic.cache_aware_bytes, bw)
    lib = library_level(graph, works, spec, assumptions, launch, traffic.cache_aware_bytes)
    library = _library_bound(lib, cache_aware, traffic.cache_aware_bytes, bw)
    totals = Totals(
        work.flops, work.contraction_flops, dram, unfused_bytes, traffic.cache_aware_bytes
    )
    return Analysis(
        totals,
        fused,
        unfused,
        ops,
        spec.name,
        assumptions,
        cache_aware=cache_aware,
        traffic=traffic,
        library=library,
        library_level=lib,
        fastest_op_compute=_fastest(ops, works, spec, assumptions),
    )


def _fastest(ops, works, spec: HardwareSpec, a: Assumptions) -> tuple[float, ...] | None:
    """Each op's compute time under the `fastest` precision policy (for the precision
    opportunity, solar.insight); None when the analysis already uses it."""
    if a.precision is Precision.FASTEST:
        return None
    fastest = replace(a, precision=Precision.FASTEST)
    return tuple(compute_time(total(works[i] for i in op.node_ids), spec, fastest).seconds for op in ops)


def _library_bound(lib: LibraryLevel, cache_aware: Bound, total_bytes: float, bw: float) -> Bound:
    """The library level (solar.backends.library): never below the cache-aware bound, which holds
    for every implementation."""
    if cache_aware.seconds >= lib.seconds:
        return Bound(Level.LIBRARY, *[getattr(cache_aware, f) for f in Bound.__slots__[1:]])
    shares: dict[Bottleneck, float] = {"compute": lib.rest_seconds, "memory": lib.extra_seconds, "launch": 0.0}
    units: dict[str, float] = {}
    for k in lib.kernels:
        shares[_dominant({"compute": k.compute_seconds, "memory": k.memory_seconds, "launch": k.launch_seconds})] += k.seconds
        if k.binding_unit is not None:
            units[k.binding_unit] = units.get(k.binding_unit, 0.0) + k.compute_seconds
    charged = sum(k.dram_bytes for k in lib.kernels)
    return Bound(
        level=Level.LIBRARY,
        seconds=lib.seconds,
        bottleneck=_dominant(shares),
        compute_seconds=sum(k.compute_seconds for k in lib.kernels) + lib.rest_compute_seconds,
        memory_seconds=max(charged, total_bytes) / bw,
        launch_seconds=sum(k.launch_seconds for k in lib.kernels) + lib.rest_launch_seconds,
        binding_unit=max(units, key=units.__getitem__) if units else cache_aware.binding_unit,
    )


def _max_bound(level: Level, ct: ComputeTime, memory_seconds: float, launch: float) -> Bound:
    """max(compute, memory, launch): each is a lower bound on the same execution."""
    terms: dict[Bottleneck, float] = {
        "compute": ct.seconds,
        "memory": memory_seconds,
        "launch": launch,
    }
    return Bound(
        level,
        slowest(ct.seconds, memory_seconds, launch),
        _dominant(terms),
        ct.seconds,
        memory_seconds,
        launch,
        ct.binding_unit,
    )


def analyze(
    program: Program, spec: HardwareSpec, assumptions: Assumptions = Assumptions()
) -> Analysis:
    return analyze_graph(lift(program), spec, assumptions)


def _op_costs(
    graph: EinsumGraph,
    works: dict[int, Work],
    spec: HardwareSpec,
    assumptions: Assumptions,
    launch: float,
) -> tuple[OpCost, ...]:
    groups = op_groups(graph)
    warm = assumptions.cache == "warm"
    group_bytes = unfused_dram_bytes(graph, groups, spec.l2_bytes, warm, assumptions.writeback)
    copies = inplace_copies(graph)
    group_works = graph.memo.get("group_works")
    if group_works is None:
        group_works = tuple(total(works[i] for i in g.node_ids) for g in groups)
        graph.memo["group_works"] = group_works
    # Identical op instances (the same op in every layer) have equal Work: each distinct one is
    # priced once, with the number of instances that share it as its multiplicity.
    priced: dict[Work, ComputeTime] = {}
    rows: list[OpCost] = []
    for group, nbytes, work in zip(groups, group_bytes, group_works):
        ct = priced.get(work)
        if ct is None:
            ct = priced[work] = _compute(work, spec, assumptions)
        mem = nbytes / spec.dram_bytes_per_s
        # an op made only of in-place identity copies runs no kernel (they move nothing)
        runs = not copies.issuperset(group.node_ids)
        terms = {"compute": ct.seconds, "memory": mem, "launch": kernel_launch(launch, runs)}
        bottleneck = _dominant(terms)
        origin = graph.node(group.node_ids[0]).origin
        rows.append(
            OpCost(
                instance=None if origin is None else origin.instance,
                op="<no origin>" if origin is None else origin.op,
                source="" if origin is None else origin.source,
                node_ids=group.node_ids,
                flops=work.flops,
                contraction_flops=work.contraction_flops,
                dram_bytes=nbytes,
                seconds=slowest(ct.seconds, mem, terms["launch"]),
                bottleneck=bottleneck,
                compute_seconds=ct.seconds,
                memory_seconds=mem,
                launch_seconds=terms["launch"],
                binding_unit=ct.binding_unit,
                binds=BINDS[bottleneck] or ct.binding_path or "",
                module="" if origin is None else origin.module,
            )
        )
    return tuple(rows)


def _unfused(ops: tuple[OpCost, ...], total_bytes: float, bw: float) -> tuple[Bound, float]:
    """The unfused bound of the op rows (`unfused_seconds`), with its bottleneck and the DRAM bytes
    it charges."""
    seconds, nbytes, extra_seconds = unfused_seconds(
        [op.seconds for op in ops], [op.memory_seconds for op in ops],
        [op.dram_bytes for op in ops], total_bytes, bw,
    )
    shares: dict[Bottleneck, float] = {t: 0.0 for t in TERMS}
    units: dict[str, float] = {}
    for op in ops:
        shares[op.bottleneck] += op.seconds
        if op.binding_unit is not None:
            units[op.binding_unit] = units.get(op.binding_unit, 0.0) + op.compute_seconds
    shares["memory"] += extra_seconds
    bound = Bound(
        level=Level.UNFUSED,
        seconds=seconds,
        bottleneck=_dominant(shares),
        compute_seconds=sum(op.compute_seconds for op in ops),
        memory_seconds=nbytes / bw,
        launch_seconds=sum(op.launch_seconds for op in ops),
        binding_unit=max(units, key=units.__getitem__) if units else None,
    )
    return bound, nbytes


# ---- the formulas: over floats here, over sympy formulas in solar.symbolic.bounds ----------------


def t_launch(spec: HardwareSpec, a: Assumptions, runs_a_kernel: bool) -> float:
    """t_launch of a program: the spec's minimum kernel time if the program runs at least one
    kernel (has a statement) and launch is counted, else 0."""
    return spec.min_kernel_seconds.value if a.count_launch and runs_a_kernel else 0.0


def kernel_launch(launch: Num, runs: bool, alg: Algebra = FLOATS) -> Num:
    """t_launch of one op instance: none for an op that runs no kernel (only in-place identity
    copies)."""
    return launch if runs else alg.zero


def slowest(compute: Num, memory: Num, launch: Num, alg: Algebra = FLOATS) -> Num:
    """max(compute, memory, launch): each is a lower bound on the same execution (a kernel, or the
    whole program as one), which cannot finish before its slowest resource."""
    return alg.max(compute, memory, launch)


def unfused_seconds(
    seconds: Sequence[Num], memory: Sequence[Num], nbytes: Sequence[Num], total_bytes: Num, bw: Num,
    alg: Algebra = FLOATS,
) -> tuple[Num, Num, Num]:
    """Σ_g max(compute_g, bytes_g/BW, launch) plus the traffic no kernel was charged for, from each
    eager kernel's `seconds` (its `slowest`), `memory` seconds and DRAM `nbytes`; returns (seconds,
    DRAM bytes, seconds of the uncharged traffic).

    `total_bytes` is a lower bound on the DRAM traffic of ANY implementation (the cache-aware
    bytes: compulsory plus what finite on-chip storage forces), so also of the eager one. The
    per-kernel byte rules may charge less in total (two ops reading disjoint halves of one input
    that fits in L2: the second half is charged to nobody; a kernel that must re-read its input).
    Any eager execution moves at least max(Σ bytes_g, total_bytes), and the unattributed
    E = total_bytes − Σ bytes_g can hide only in the slack max(compute_g, launch) − bytes_g/BW of
    the kernels; the smallest total time is therefore Σ_g max(...) + max(0, E/BW − Σ_g slack_g).
    This keeps unfused >= cache_aware >= fused."""
    charged = alg.sum(nbytes)
    extra_bytes = alg.max(alg.zero, total_bytes - charged)
    slack = alg.sum(s - m for s, m in zip(seconds, memory))
    extra_seconds = alg.max(alg.zero, extra_bytes / bw - slack)
    return alg.sum(seconds) + extra_seconds, charged + extra_bytes, extra_seconds
