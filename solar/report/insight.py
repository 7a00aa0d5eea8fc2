"""Insight rows and opportunities: for each pair of neighbouring bound levels, where the difference
comes from (the term — bytes, launches, compute, or any other term a level has — and the op,
kernel or pattern), and a ranked list of what would win most (fusion, precision, cache, launches,
dispatch; with measured times, the time lost against each level). Generic over levels: a level
contributes parts through PARTS, and every `*_seconds` term of its bound is compared."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from solar.backends.levels import Level, claims


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Part(_Model):
    """One contributor to a level's time: an op, a library kernel, a cache pattern."""

    kind: str  # "op" | "kernel" | "pattern" | "rest"
    name: str
    source: str = ""
    module: str = ""
    seconds: float  # the part's share of the gap (hi level's time it adds over the lo level)


class Gap(_Model):
    """hi − lo for two neighbouring levels, split by term and by part (largest first)."""

    lo: str
    hi: str
    seconds: float
    by_term: dict[str, float]
    parts: list[Part]


class Opportunity(_Model):
    kind: str  # "fusion" | "precision" | "cache" | "launch" | "dispatch" | "measured"
    what: str
    seconds: float  # time it could win: at most the gap between `lo` and `hi` (docs/BOUNDS.md §16)
    detail: str = ""
    caveat: str = ""
    lo: str = ""  # the levels whose gap bounds the win ("" for what is not tied to two levels)
    hi: str = ""
    together: float = 0.0  # > 0: it overlaps other items of its gap, which together win at most this
    where: str = ""  # file:line of the op or kernel it names ("" for what is not one place)
    count: int = 1  # the ops or kernels it stands for: the same fix at one place (a loop's body)


class Insights(_Model):
    gaps: list[Gap]
    opportunities: list[Opportunity]
    # per op: the compulsory DRAM bytes only its work moves (op_floor_bytes), which fusing it
    # cannot save; [] when unknown
    op_floor_bytes: list[float] = []


TOP_PARTS = 5
# Levels whose time is more than the terms of their bound: the rest has this name (eager_host: the
# host's dispatch, docs/BOUNDS.md §17, which its bound carries in no `*_seconds` term).
UNTERMED: dict[str, str] = {Level.EAGER_HOST: "host dispatch"}
# Levels whose bound does not build on another's, though it may be the larger: a CUDA-graph replay
# pays no host dispatch, so its gap is never measured from eager_host.
NOT_BELOW: dict[str, frozenset[str]] = {Level.GRAPHED: frozenset({Level.EAGER_HOST})}
TOP_OPPORTUNITIES = 10
TF32_CAVEAT = (
    "fp32 contractions on TF32/BF16 tensor cores round their inputs: results differ beyond fp32 "
    "rounding, valid where a tolerance allows (as tolerance-based benchmarks do)"
)


def _op_label(op) -> str:
    return f"{op.op}" + (f" [{op.module}]" if op.module else "")


def _kernel_label(k) -> str:
    return " + ".join(k.ops) + (f" [{k.module}]" if k.module else "")


def _where(source: str) -> str:
    """file:line of an op's source (`model.py:18: y = ...`; the first of a kernel's sources)."""
    return source.split(": ", 1)[0]


def _merged(items: list[tuple[float, tuple, Opportunity]]) -> list[tuple[float, tuple, Opportunity]]:
    """Items naming the same fix at the same place (the ops of a loop's body, traced once per
    iteration) as one item, their wins summed and counted."""
    out: dict[tuple, tuple[float, tuple, Opportunity]] = {}
    for raw, keys, o in items:
        k = (o.kind, o.what, o.where, keys)
        if k in out:
            r, _, m = out[k]
            o = m.model_copy(update={"seconds": m.seconds + o.seconds, "count": m.count + 1})
            raw += r
        out[k] = (raw, keys, o)
    return list(out.values())


def _parts_cache_aware(report) -> list[Part]:
    if report.traffic is None:
        return []
    bw = _bandwidth(report)
    return [
        Part(kind="pattern", name=f"{f.kind}: {f.detail}", seconds=f.bytes / bw)
        for f in report.traffic.forced
        if f.bytes > 0 and bw
    ]


def _beyond_compute(kind: str, items, label: Callable[[Any], str]) -> list[Part]:
    """Each op's or library kernel's time beyond its compute (its DRAM traffic and launch)."""
    return [
        Part(
            kind=kind,
            name=label(x),
            source=x.source,
            module=x.module,
            seconds=x.seconds - x.compute_seconds,
        )
        for x in items
    ]


# level -> the parts its time adds over any lower level (a level without an entry gives none)
PARTS: dict[Level, Callable[[Any], list[Part]]] = {
    Level.CACHE_AWARE: _parts_cache_aware,
    Level.LIBRARY: lambda r: _beyond_compute("kernel", r.library_kernels, _kernel_label),
    Level.UNFUSED: lambda r: _beyond_compute("op", r.ops, _op_label),
}


def op_floor_bytes(graph, op_node_ids, traffic) -> list[float]:
    """Per op (its node ids), the compulsory DRAM bytes its work moves in any implementation: the
    program inputs only it reads, less what a warm L2 may hold, and the outputs only it writes,
    less what the write-back L2 may keep; disjoint between ops, so they add to at most the
    compulsory bytes."""
    from solar.backends.memory import compulsory_by_tensor  # islpy

    if traffic is None:
        return []
    per = compulsory_by_tensor(graph)
    accessed = []
    for ids in op_node_ids:
        nodes = [graph.node(i) for i in ids]
        accessed.append((
            {o.tensor for n in nodes for o in n.operands} & per.keys(),
            {n.output for n in nodes} & per.keys(),
        ))
    readers = Counter(t for reads, _ in accessed for t in reads)
    writers = Counter(t for _, writes in accessed for t in writes)
    kept = sum(w for _, w in per.values()) - traffic.write_bytes  # outputs the L2 may keep
    out = []
    for reads, writes in accessed:
        r = sum(per[t][0] for t in reads if readers[t] == 1 and writers[t] == 0)
        w = sum(per[t][1] for t in writes if writers[t] == 1)
        out.append(max(0.0, r - traffic.l2_resident_bytes) + max(0.0, w - kept))
    return out


def _bandwidth(report) -> float:
    b = report.bounds.get(Level.FUSED)
    t = report.totals
    return t.dram_bytes / b.memory_seconds if b is not None and b.memory_seconds else 0.0


def _terms(bound) -> dict[str, float]:
    data = bound.model_dump()
    return {
        k.removesuffix("_seconds"): v
        for k, v in data.items()
        if k.endswith("_seconds") and isinstance(v, float)
    }


def gaps(report) -> list[Gap]:
    """Neighbouring levels in ascending order of time (ties in the report's order); a level whose
    bound is not built on the one below it measures from the next one down that it is (a graph
    replay's bound above the eager host's: from unfused)."""
    levels = sorted(report.bounds, key=lambda name: report.bounds[name].seconds)
    out = []
    for k, hi in enumerate(levels[1:], 1):
        lo = next((lv for lv in reversed(levels[:k]) if lv not in NOT_BELOW.get(hi, ())), levels[k - 1])
        a, b = report.bounds[lo], report.bounds[hi]
        ta, tb = _terms(a), _terms(b)
        by_term = {t: tb.get(t, 0.0) - ta.get(t, 0.0) for t in dict.fromkeys([*tb, *ta])}
        if hi in UNTERMED:  # the part of the gap no term of the bound grew by is the level's own time
            rest = (b.seconds - a.seconds) - sum(max(v, 0.0) for v in by_term.values())
            if rest > 0:
                by_term[UNTERMED[hi]] = rest
        parts = sorted((p for p in PARTS.get(hi, lambda r: [])(report) if p.seconds > 0), key=lambda p: -p.seconds)
        # each part at most the gap: its time over its compute overlaps what the lower level charges
        cap = max(b.seconds - a.seconds, 0.0)
        parts = [p.model_copy(update={"seconds": min(p.seconds, cap)}) for p in parts]
        out.append(
            Gap(
                lo=lo,
                hi=hi,
                seconds=b.seconds - a.seconds,
                by_term=by_term,
                parts=parts[:TOP_PARTS],
            )
        )
    return out


# Budgets: each opportunity draws on the gaps between the levels it names (`_named`); the items that
# draw on one gap overlap, so together they never take more than it (docs/BOUNDS.md §16).
_DEVICE = "device"  # every device-side fusion and launch item: unfused − cache-aware
_HOST = "host"  # eager@host − unfused


def _levels(b) -> dict[str, float]:
    """The levels the opportunities name, clipped into the order fused ≤ cache-aware ≤ library ≤
    unfused ≤ eager@host (a level absent from the report takes the one below it)."""
    fused = b[Level.FUSED].seconds
    unfused = b[Level.UNFUSED].seconds if Level.UNFUSED in b else fused
    ca = min(max(b[Level.CACHE_AWARE].seconds, fused), unfused) if Level.CACHE_AWARE in b else fused
    lib = min(max(b[Level.LIBRARY].seconds, ca), unfused) if Level.LIBRARY in b else ca
    host = max(b[Level.EAGER_HOST].seconds, unfused) if Level.EAGER_HOST in b else unfused
    return {Level.FUSED: fused, Level.CACHE_AWARE: ca, Level.LIBRARY: lib, Level.UNFUSED: unfused,
            Level.EAGER_HOST: host}


def _lower(b, level: Level) -> Level:
    """`level` if the report has it, else the nearest level below it that it has."""
    order = (Level.FUSED, Level.CACHE_AWARE, Level.LIBRARY)
    return next((lv for lv in reversed(order[: order.index(level) + 1]) if lv in b), Level.FUSED)


def _capped(items, budgets: dict[str, float]) -> list[Opportunity]:
    """Largest first, each item takes at most what is left of every budget it draws on; an item
    cut by a budget says that it overlaps the others drawing on it (together at most the budget)."""
    left = dict(budgets)
    out = []
    for raw, keys, o in sorted(items, key=lambda it: -it[0]):
        key = min(keys, key=left.__getitem__)  # the budget with least left
        win = min(raw, left[key])
        if win <= 0:
            continue
        for k in keys:
            left[k] -= win
        if win < raw:
            o = o.model_copy(update={"together": budgets[key]})
        out.append(o.model_copy(update={"seconds": win}))
    return out


def opportunities(
    report,
    fastest_op_compute: tuple[float, ...] | None = None,
    measured: dict[str, float] | None = None,
    floor_bytes: list[float] | None = None,
) -> list[Opportunity]:
    """Ranked by the time each could win, largest first; each at most the gap between the levels
    it names, and the items on one gap together at most that gap. `floor_bytes`: per op, the
    compulsory bytes only its work moves (op_floor_bytes)."""
    b = report.bounds
    bw = _bandwidth(report) if floor_bytes else 0.0
    floors = [x / bw for x in floor_bytes] if floor_bytes and bw else [0.0] * len(report.ops)
    lv = _levels(b)
    lib_lo = _lower(b, Level.CACHE_AWARE)  # fusing across library kernels: cache-aware -> library
    op_lo = _lower(b, Level.LIBRARY)  # fusing an op into its neighbours: library -> unfused
    gap = {
        (lib_lo, Level.LIBRARY): lv[Level.LIBRARY] - lv[Level.CACHE_AWARE],
        (op_lo, Level.UNFUSED): lv[Level.UNFUSED] - lv[Level.LIBRARY],
        (Level.FUSED, Level.CACHE_AWARE): lv[Level.CACHE_AWARE] - lv[Level.FUSED],
        (lib_lo, Level.UNFUSED): lv[Level.UNFUSED] - lv[Level.CACHE_AWARE],
        (Level.UNFUSED, Level.EAGER_HOST): lv[Level.EAGER_HOST] - lv[Level.UNFUSED],
        _DEVICE: lv[Level.UNFUSED] - lv[Level.CACHE_AWARE],
        _HOST: lv[Level.EAGER_HOST] - lv[Level.UNFUSED],
    }
    items: list[tuple[float, tuple, Opportunity]] = []

    def add(raw: float, keys: tuple, **fields) -> None:
        lo, hi = next((k for k in keys if isinstance(k, tuple)), ("", ""))
        if raw > 0:
            items.append((raw, keys, Opportunity(seconds=raw, lo=str(lo), hi=str(hi), **fields)))

    # fusion: a library kernel's time over its compute (its DRAM boundary, its launch), an unfused
    # non-contraction op's likewise; each within its gap and, with the launch row, within
    # unfused − cache-aware
    for k in report.library_kernels:
        add(k.seconds - k.compute_seconds, ((lib_lo, Level.LIBRARY), _DEVICE), kind="fusion",
            what=f"fuse across the library kernel {_kernel_label(k)}", where=_where(k.source),
            detail=f"{k.in_bytes:.0f} B in, {k.out_bytes:.0f} B out of DRAM at its boundary ({k.source})")
    for op, floor in zip(report.ops, floors):
        if not op.contractions:
            # inside any fused kernel the op's work still costs its compute and its compulsory bytes
            add(op.seconds - max(op.compute_seconds, floor), ((op_lo, Level.UNFUSED), _DEVICE), kind="fusion",
                what=f"fuse {_op_label(op)} into its neighbours", where=_where(op.source),
                detail=f"unfused {op.seconds * 1e6:.2f} µs, compute {op.compute_seconds * 1e6:.2f} µs"
                + (f", compulsory DRAM {floor * 1e6:.2f} µs" if floor > 0 else "") + f" ({op.source})")
    launch_bound = [op for op in report.ops if op.bottleneck == "launch"]
    if launch_bound:
        add(sum(op.seconds - max(op.compute_seconds, op.memory_seconds) for op in launch_bound),
            ((lib_lo, Level.UNFUSED), _DEVICE),
            kind="launch", what=f"{len(launch_bound)} kernels are bound by the launch floor: fuse them",
            detail="each kernel takes at least the spec's minimum kernel time")
    if Level.CACHE_AWARE in b:
        add(lv[Level.CACHE_AWARE] - lv[Level.FUSED], ((Level.FUSED, Level.CACHE_AWARE),), kind="cache",
            what="keep more of the working set on chip (finite on-chip storage forces traffic)",
            detail=report.traffic.summary() if report.traffic is not None else "")
    if Level.EAGER_HOST in b:
        add(lv[Level.EAGER_HOST] - lv[Level.UNFUSED], ((Level.UNFUSED, Level.EAGER_HOST), _HOST),
            kind="dispatch", what="host dispatch binds eager execution: CUDA graphs or torch.compile")
    out = _capped(_merged(items), gap)
    if fastest_op_compute is not None:
        # an op's own kernel at the fastest precision: its compute share above its other terms
        floor = getattr(b[Level.FUSED], "launch_seconds", 0.0) if Level.FUSED in b else 0.0
        precise = []
        for op, fast in zip(report.ops, fastest_op_compute):
            win = op.compute_seconds - max(fast, op.memory_seconds, floor)
            if op.bottleneck == "compute" and win > 0:
                precise.append((win, (), Opportunity(
                    kind="precision", what=f"run {_op_label(op)} at the fastest precision (it runs on {op.binds} now)",
                    seconds=win, caveat=TF32_CAVEAT, detail=op.source, where=_where(op.source),
                )))
        out += [o for _, _, o in _merged(precise)]
    for mode, seconds in (measured or {}).items():
        # the time lost against the tightest level that claims this execution
        below = [
            (bound.seconds, level)
            for level, bound in b.items()
            if bound.seconds <= seconds and claims(level, mode)
        ]
        if below:
            tight, level = max(below)
            ratios = ", ".join(
                f"{lv} {seconds / bd.seconds:.2f}x" for lv, bd in b.items() if bd.seconds
            )
            out.append(
                Opportunity(
                    kind="measured",
                    what=f"{mode} run ({seconds * 1e6:.2f} µs) is above the {level} bound",
                    seconds=seconds - tight,
                    lo=str(level),
                    detail=f"measured / bound: {ratios}",
                )
            )
    out.sort(key=lambda o: -o.seconds)
    return out[:TOP_OPPORTUNITIES]


def insights(report, fastest_op_compute=None, measured=None, floor_bytes=None) -> Insights:
    return Insights(
        gaps=gaps(report),
        opportunities=opportunities(report, fastest_op_compute, measured, floor_bytes),
        op_floor_bytes=list(floor_bytes or []),
    )
