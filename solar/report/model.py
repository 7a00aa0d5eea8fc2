"""The analysis report: one pydantic model per (program, GPU), built from a backend Analysis. The
CLI renders it as a table or JSON; the Python API returns it."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from solar.backends.levels import Level
from solar.errors import SolarError
from solar.report.insight import Insights, insights, op_floor_bytes
from solar.report.measured_ops import MeasuredOps
from solar.version import __version__


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


class BoundReport(_Model):
    seconds: float
    bottleneck: str
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float
    binding_unit: str | None = None


class OpReport(_Model):
    instance: int | None
    op: str
    source: str
    einsum: list[str]
    flops: int
    contraction_flops: int
    dram_bytes: float
    seconds: float
    bottleneck: str
    compute_seconds: float
    memory_seconds: float
    binds: str = ""  # unit and precision that bind the op: "tensor bf16", "fma fp32", "sfu", "dram"
    module: str = ""  # module path of the calling layer ("layers.3.self_attn.q_proj"; "" at the top)
    contractions: list[str] = []  # the einsum lines that are contractions (a fused op's headline)

    @property
    def headline(self) -> str:
        """The one einsum line that names the op: its contraction(s), else its longest line."""
        if self.contractions:
            return "; ".join(self.contractions)
        return max(self.einsum, key=len) if self.einsum else ""


class TotalsReport(_Model):
    flops: int
    contraction_flops: int
    dram_bytes: float
    unfused_dram_bytes: float
    arithmetic_intensity: float  # flops per compulsory DRAM byte
    cache_aware_dram_bytes: float = 0.0


class ForcedReport(_Model):
    """One pattern behind the cache-aware traffic: a dependency-forced re-read or a contraction's
    capacity-forced I/O; `bytes` is the extra traffic it forces (0 when it fits on chip)."""

    kind: str  # "dependency" | "capacity"
    tensors: list[str]
    statement: int
    detail: str
    bytes: float


class TrafficReport(_Model):
    """DRAM bytes per level of the cache-aware bound, and the on-chip storage S it assumes."""

    onchip_bytes: float
    l2_resident_bytes: float
    compulsory_bytes: float
    dependency_forced_bytes: float
    capacity_forced_bytes: float
    cache_aware_bytes: float
    forced: list[ForcedReport]

    def lines(self) -> tuple[str, str]:
        """The traffic levels in bytes as the CLI prints them: two lines of at most 95 characters."""
        return (
            f"DRAM traffic: compulsory {_fmt_bytes(self.compulsory_bytes)}, "
            f"dependency-forced +{_fmt_bytes(self.dependency_forced_bytes)}, "
            f"capacity-forced +{_fmt_bytes(self.capacity_forced_bytes)}",
            f"  -> cache-aware {_fmt_bytes(self.cache_aware_bytes)} (on-chip storage S = {_fmt_bytes(self.onchip_bytes)})",
        )

    def summary(self) -> str:
        """The same in one line (a paragraph of the HTML report, an opportunity's detail)."""
        return " ".join(line.strip() for line in self.lines())


def _fmt_bytes(x: float) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.3f} {prefix}B"
    return f"{x:.0f} B"


class ProvenanceReport(_Model):
    """Where one part of the program's IR came from: "traced" (a tracer's deterministic lowering)
    or "llm" (written by a model and checked against the original at the shapes listed)."""

    part: str
    source: str
    model: str = ""
    attempts: int = 0
    requests: int = 0
    max_error: float = 0.0
    shapes: list[str] = []
    cached: bool = False


class ServingReport(_Model):
    """An `hf:` serving step: the scenario, the model's weight and KV-cache bytes, and one decoder
    layer's bound per level (seconds, compute_seconds, memory_seconds, launch_seconds)."""

    model: str
    scenario: str  # "prefill" | "decode"
    batch: int
    seq: int  # new tokens per sequence
    context: int  # cached tokens before the step
    layers: int
    weight_bytes: int
    kv_cache_bytes: int
    per_layer: dict[str, dict[str, float]]


class KernelReport(_Model):
    """One kernel of the library level: the op(s) it runs (an attention core runs several), the
    bytes that must enter and leave it at its boundary, and its time bound."""

    ops: list[str]
    source: str
    module: str
    in_bytes: float
    out_bytes: float
    dram_bytes: float
    seconds: float
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float


class Report(_Model):
    solar_version: str = __version__
    program: str
    arch: str
    assumptions: list[str]
    totals: TotalsReport
    bounds: dict[str, BoundReport]  # "fused", "cache_aware", "library", "unfused"[, "recurrence", "eager_host"]
    ops: list[OpReport]
    traffic: TrafficReport | None = None
    provenance: list[ProvenanceReport] = []
    serving: ServingReport | None = None
    library_kernels: list[KernelReport] = []
    insights: Insights | None = None
    measured_ops: MeasuredOps | None = None  # per-op measured headroom (solar.report.measured_ops)
    notices: list[str] = []  # lines shown under the bounds: a choice the user did not make (the module mode)

    @property
    def sol_seconds(self) -> float:
        return self.bounds[Level.FUSED].seconds


def build_report(program_name: str, analysis: Any, graph: Any) -> Report:
    """Turn a backend Analysis (solar.backends.bounds.Analysis) into the report model."""
    nodes = graph.nodes()
    equations = graph.equations

    def bound(b: Any) -> BoundReport:
        return BoundReport(
            seconds=b.seconds,
            bottleneck=b.bottleneck,
            compute_seconds=b.compute_seconds,
            memory_seconds=b.memory_seconds,
            launch_seconds=b.launch_seconds,
            binding_unit=b.binding_unit,
        )

    t = analysis.totals
    assumptions = analysis.assumptions.describe()
    if analysis.traffic is not None:
        assumptions.append(analysis.traffic.describe())
    found = (analysis.fused, analysis.cache_aware, analysis.library, analysis.unfused, *analysis.levels)
    bounds = {str(b.level): bound(b) for b in found if b is not None}  # report order (the level table's)
    assumptions.extend(analysis.notes)
    lib = getattr(analysis, "library_level", None)
    report = Report(
        program=program_name,
        arch=analysis.spec,
        assumptions=assumptions,
        totals=TotalsReport(
            flops=t.flops,
            contraction_flops=t.contraction_flops,
            dram_bytes=t.dram_bytes,
            unfused_dram_bytes=t.unfused_dram_bytes,
            arithmetic_intensity=t.flops / t.dram_bytes if t.dram_bytes else 0.0,
            cache_aware_dram_bytes=t.cache_aware_dram_bytes,
        ),
        bounds=bounds,
        traffic=None if analysis.traffic is None else traffic_report(analysis.traffic, equations),
        ops=[
            OpReport(
                instance=op.instance,
                op=op.op,
                source=op.source,
                einsum=[equations[i] for i in op.node_ids],
                flops=op.flops,
                contraction_flops=op.contraction_flops,
                dram_bytes=op.dram_bytes,
                seconds=op.seconds,
                bottleneck=op.bottleneck,
                compute_seconds=op.compute_seconds,
                memory_seconds=op.memory_seconds,
                binds=op.binds,
                module=op.module,
                contractions=[equations[i] for i in op.node_ids if nodes[i].is_contraction],
            )
            for op in analysis.ops
        ],
        library_kernels=[] if lib is None else [
            KernelReport(
                ops=list(k.ops), source="; ".join(k.sources), module=k.module, in_bytes=k.in_bytes,
                out_bytes=k.out_bytes, dram_bytes=k.dram_bytes, seconds=k.seconds,
                compute_seconds=k.compute_seconds, memory_seconds=k.memory_seconds,
                launch_seconds=k.launch_seconds,
            )
            for k in lib.kernels
        ],
    )
    floors = op_floor_bytes(graph, [op.node_ids for op in analysis.ops], analysis.traffic)
    return with_insights(report, getattr(analysis, "fastest_op_compute", None), floor_bytes=floors)


def with_insights(
    report: Report, fastest_op_compute=None, measured: dict[str, float] | None = None, floor_bytes=None
) -> Report:
    """The report with its insight rows and opportunities (solar.report.insight) recomputed, e.g. after a
    level was added or with measured times."""
    if floor_bytes is None and report.insights is not None:
        floor_bytes = report.insights.op_floor_bytes
    new = insights(report, fastest_op_compute, measured, floor_bytes)
    if fastest_op_compute is None and report.insights is not None:  # keep the precision rows
        kept = [o for o in report.insights.opportunities if o.kind in ("precision", "measured op")]
        ranked = sorted([*new.opportunities, *kept], key=lambda o: -o.seconds)
        new = new.model_copy(update={"opportunities": ranked})
    return report.model_copy(update={"insights": new})


class GroupRow(_Model):
    """One row of a rolled-up op table: the ops sharing a key (a module path, a layer, an op type),
    or the "other" / "total" rows; `share` is the fraction of the summed unfused op time. A row
    that folds `repeat` > 1 identical groups (group_ops with fold) sums them."""

    name: str
    count: int
    flops: int
    dram_bytes: float
    seconds: float
    share: float
    repeat: int = 1


TOP = "(top)"  # the key of ops called by the top-level module itself


def _layer(path: str) -> str:
    """The path up to and including its first integer component (`layers.3.mlp.up` -> `layers.3`);
    a path with none is its own layer."""
    parts = path.split(".")
    for k, part in enumerate(parts):
        if part.isdigit():
            return ".".join(parts[: k + 1])
    return path


GROUP_KEYS = {  # --group-by name -> the key of one op row
    "module": lambda op: op.module or TOP,
    "layer": lambda op: _layer(op.module) or TOP,
    "op": lambda op: op.op,
}


def _row(name: str, ops: list[OpReport], total_seconds: float, repeat: int = 1) -> GroupRow:
    seconds = sum(o.seconds for o in ops)
    return GroupRow(
        name=name,
        count=len(ops),
        flops=sum(o.flops for o in ops),
        dram_bytes=sum(o.dram_bytes for o in ops),
        seconds=seconds,
        share=seconds / total_seconds if total_seconds else 0.0,
        repeat=repeat,
    )


def _indexed(name: str) -> tuple[str, int | None]:
    """The name with its first integer component as `*`, and that integer (None: it has none)."""
    parts = name.split(".")
    k = next((k for k, part in enumerate(parts) if part.isdigit()), None)
    if k is None:
        return name, None
    return ".".join([*parts[:k], "*", *parts[k + 1:]]), int(parts[k])


def _ranges(indices: list[int]) -> str:
    """Sorted integers as runs: [0, 1, 2, 5] -> "0..2,5"."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(f"{r[0]}..{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def _fold(groups: dict[str, list[OpReport]]) -> dict[str, list[list[OpReport]]]:
    """Groups whose names differ only in their first index (`layers.3`, `layers.4.mlp`) and that
    are identical (the same ops in the same order, the same time; the first layer may read the
    program's input where the others read a layer's output) as one entry, named with the
    indices it covers (`layers.{0..31}`); every other group alone."""
    similar: dict[tuple, list[tuple[int | None, str, list[OpReport]]]] = {}
    for name, members in groups.items():
        pattern, index = _indexed(name)
        same = (tuple(o.op for o in members), sum(o.seconds for o in members))
        similar.setdefault((pattern, same) if index is not None else (name, None), []).append((index, name, members))
    out: dict[str, list[list[OpReport]]] = {}
    for (pattern, _), found in similar.items():
        if len(found) == 1:
            out[found[0][1]] = [found[0][2]]
        else:
            out[pattern.replace("*", "{" + _ranges([i for i, _, _ in found]) + "}", 1)] = [m for _, _, m in found]
    return out


def group_ops(ops: list[OpReport], by: str, fold: bool = False) -> list[GroupRow]:
    """The op rows rolled up by `by` (module | layer | op), slowest group first, then a total row;
    with `fold`, identical groups that differ only in an index in one row (GroupRow.repeat, _fold)."""
    if by not in GROUP_KEYS:
        raise SolarError(f"cannot group ops by {by!r}; choose one of {', '.join(GROUP_KEYS)}")
    key = GROUP_KEYS[by]
    groups: dict[str, list[OpReport]] = {}
    for op in ops:
        groups.setdefault(key(op), []).append(op)
    total = sum(o.seconds for o in ops)
    folded = _fold(groups) if fold else {name: [members] for name, members in groups.items()}
    rows = [_row(name, [o for m in same for o in m], total, len(same)) for name, same in folded.items()]
    return sorted(rows, key=lambda r: -r.seconds) + [_row("total", ops, total)]


def top_ops(ops: list[OpReport], n: int) -> tuple[list[OpReport], list[GroupRow]]:
    """The n slowest op rows, and the summary rows under them: "other" (when any are left out), "total"."""
    ranked = sorted(ops, key=lambda o: -o.seconds)
    total = sum(o.seconds for o in ops)
    rest = ranked[n:]
    summary = [_row("other", rest, total)] if rest else []
    return ranked[:n], summary + [_row("total", ops, total)]


def traffic_report(traffic: Any, equations: tuple[str, ...]) -> TrafficReport:
    """The report view of a backend Traffic (solar.backends.cache.Traffic)."""
    forced = [
        ForcedReport(
            kind="dependency",
            tensors=[r.tensor, r.stat],
            statement=r.consumer,
            detail=(
                f"{equations[r.consumer]}: {r.groups} slice(s) of {r.group_elements} "
                f"elements of {r.tensor} ({r.group_bytes:.0f} B each) needed again after {r.stat}"
            ),
            bytes=r.bytes,
        )
        for r in traffic.rereads
    ]
    forced += [
        ForcedReport(
            kind="capacity",
            tensors=[io.a, io.b, io.c],
            statement=io.node,
            detail=(
                f"{equations[io.node]}: batch {io.batch}, m={io.m}, n={io.n}, k={io.k}, "
                f"S = {io.onchip_words} words of {io.word_bits} bits (Smith et al. 2019)"
            ),
            bytes=io.bytes,
        )
        for io in traffic.contractions
    ]
    return TrafficReport(
        onchip_bytes=traffic.onchip_bytes,
        l2_resident_bytes=traffic.l2_resident_bytes,
        compulsory_bytes=traffic.compulsory_bytes,
        dependency_forced_bytes=traffic.dependency_forced_bytes,
        capacity_forced_bytes=traffic.capacity_forced_bytes,
        cache_aware_bytes=traffic.cache_aware_bytes,
        forced=forced,
    )


def reports_to_json(reports: list[Report]) -> str:
    """One object for one arch, a list for several (the `solar analyze --json` format)."""
    data = [r.model_dump(mode="json") for r in reports]
    return json.dumps(data[0] if len(data) == 1 else data, indent=2)
