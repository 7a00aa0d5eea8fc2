"""Cross-platform comparison: one program's bounds on several GPUs as one table (a row per GPU:
each level's bound, what binds it, its ratio to the first GPU, and how much of which resource would
make another term bind), with the precision path each contraction dtype takes and the clock, per
GPU. Built from the per-GPU Reports (no second analysis) and the program's arch-independent work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from solar.api import analyze_archs, assumptions_of, load
from solar.backends.assumptions import Assumptions
from solar.backends.compute import compute_time, tensor_path
from solar.backends.levels import SOL_LEVELS, ordered
from solar.backends.work import Work, graph_work, total
from solar.errors import UsageError
from solar.frontends.loaded import Loaded
from solar.hardware import HardwareSpec, get_spec
from solar.ir.nodes import Program
from solar.report import Report
from solar.usecases.resources import least_rate, resource_of

# The speed-of-light levels are max(compute, memory, launch) of one execution: their binding term
# has a "next". Other levels (unfused, and the levels built on it) are shown with their bottleneck only.
# The tensor path of a dtype's own width, to say when a GPU lacks it (fp8 on an A100).
NATIVE_PATH = {
    "f16": "fp16",
    "bf16": "bf16",
    "f8e4m3": "fp8",
    "f8e5m2": "fp8",
    "mxf8e4m3": "fp8",
    "mxf8e5m2": "fp8",
    "fp4": "fp4",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
    "i8": "int8",
    "u8": "int8",
    "i4": "int4",
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


class LevelCell(_Model):
    """One level's bound on one GPU: `binds` is the bottleneck and, for compute, the unit and
    precision path (`compute (tensor bf16)`); `ratio` = seconds / the first GPU's seconds."""

    seconds: float
    bottleneck: str
    binds: str
    ratio: (
        float | None
    )  # None: the first GPU has no such level, or a zero bound below a nonzero one
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float


class CompareRow(_Model):
    """One GPU: its clock, tensor-core paths (dense flop/s; int: op/s), the path each contraction
    dtype of the program takes there, every level's bound, and `change`: per max-form level, how
    much of the binding resource makes the next term bind."""

    arch: str
    architecture: str
    clock_mhz: float
    clock: str  # "boost 1980 MHz" | "locked 1410 MHz (boost 1980)"
    dram_bytes_per_s: float
    tensor_paths: dict[str, float]
    precision: list[str]
    levels: dict[str, LevelCell]
    change: dict[str, str]


class Comparison(_Model):
    program: str
    precision: str
    cache: str
    reference: str  # the first GPU: every ratio is to it
    flops: int
    dram_bytes: float
    cache_aware_dram_bytes: float
    rows: list[CompareRow]

    def levels(self) -> tuple[str, ...]:
        """Every level some row has, in report order: a table's columns (a GPU without a level,
        e.g. one with no calibrated dispatch floors for eager_host, has no cell for it)."""
        return ordered(level for r in self.rows for level in r.levels)

    def row(self, arch: str) -> CompareRow:
        for r in self.rows:
            if r.arch == arch:
                return r
        raise UsageError(
            f"{arch!r} is not in this comparison ({', '.join(r.arch for r in self.rows)})"
        )


def program_work(graph: Any) -> Work:
    """The program's total work (arch-independent)."""
    return total(graph_work(graph).values())


def precision_lines(work: Work, spec: HardwareSpec, assumptions: Assumptions) -> list[str]:
    """How each contraction (MAC) class of the program runs on `spec`: `bf16 -> tensor bf16`,
    `f8e4m3 -> tensor fp16 (no fp8 path)`, `f32 -> fma fp32 (no legal tensor path)`."""
    precision = assumptions.precision
    out = []
    for (dtype, tf32), n in work.macs:
        path = tensor_path(spec, (dtype, tf32), precision)
        name = dtype.text + (" (TF32 allowed)" if tf32 else "")
        if path is None:
            why = (
                f"{precision} policy: no TF32 for this op"
                if dtype.text == "f32"
                else "no legal tensor path"
            )
            out.append(f"{name} -> fma ({why})")
            continue
        native = NATIVE_PATH.get(dtype.text)
        note = (
            f" (no {native} path)"
            if native and native != path and spec.tensor_rate(native) is None
            else ""
        )
        out.append(f"{name} -> tensor {path}{note}")
    return out


def _binds(bound: Any, path: str | None) -> str:
    if bound.bottleneck == "compute" and path:
        return f"compute ({path})"
    return {"memory": "memory (dram)"}.get(bound.bottleneck, bound.bottleneck)


def what_changes(
    bound: Any,
    work: Work,
    spec: HardwareSpec,
    assumptions: Assumptions,
    path: str | None,
) -> str:
    """How much of the binding resource makes the next term bind, for a max(compute, memory,
    launch) level; the factor is exact: memory and launch terms are linear in their resource, the
    compute factor is the inverse LP's least rate (solar.usecases.inverse)."""
    terms = {
        "compute": bound.compute_seconds,
        "memory": bound.memory_seconds,
        "launch": bound.launch_seconds,
    }
    top = bound.bottleneck
    others = {k: v for k, v in terms.items() if k != top}
    nxt = max(others, key=others.__getitem__)
    if others[nxt] <= 0:
        return f"{top} alone is nonzero: nothing else binds"
    if top == "memory":
        return f"DRAM bandwidth x{terms[top] / others[nxt]:.3g} -> {nxt} binds"
    if top == "launch":
        return f"launch floor /{terms[top] / others[nxt]:.3g} -> {nxt} binds (or fewer kernels)"
    res = resource_of(path)
    if res is None:
        return "compute binds"
    rate = least_rate(work, spec, assumptions, res, others[nxt])
    now = res.rate(spec)
    if rate is None or not now:
        return f"{res.label} alone cannot: other compute units bind before {nxt}"
    return f"{res.label} x{rate / now:.3g} -> {nxt} binds"


def build_comparison(
    loaded: Loaded | Program,
    reports: Sequence[Report],
    assumptions: Assumptions | str | None = None,
    *policy: Any,
    **options: Any,
) -> Comparison:
    """The comparison of the per-GPU `reports` of one loaded program (or an IR Program), in the
    order given: the first is the reference. `assumptions`: those the reports were made under (or
    the policy arguments, positional or keyword, as solar.api.assumptions_of takes them)."""
    a = assumptions_of(assumptions, *policy, **options)
    if not reports:
        raise UsageError("no GPU given; name at least one (see `solar specs`)")
    if isinstance(loaded, Program):
        loaded = load(loaded)
    work = program_work(loaded.graph)
    first = reports[0].bounds
    rows = []
    for rep in reports:
        spec = get_spec(rep.arch)
        path = compute_time(work, spec, a).binding_path
        levels = {}
        change = {}
        for level, b in rep.bounds.items():
            ref = first[level].seconds if level in first else None
            levels[level] = LevelCell(
                seconds=b.seconds,
                bottleneck=b.bottleneck,
                binds=_binds(b, path if level in SOL_LEVELS else None),
                ratio=None
                if ref is None
                else b.seconds / ref
                if ref
                else (1.0 if b.seconds == 0 else None),
                compute_seconds=b.compute_seconds,
                memory_seconds=b.memory_seconds,
                launch_seconds=b.launch_seconds,
            )
            if level in SOL_LEVELS and b.seconds > 0:
                change[level] = what_changes(b, work, spec, a, path)
        boost = spec.boost_clock_mhz.value
        rows.append(
            CompareRow(
                arch=rep.arch,
                architecture=spec.architecture,
                clock_mhz=boost if a.clock_mhz is None else a.clock_mhz,
                clock=f"boost {boost:g} MHz"
                if a.clock_mhz is None
                else f"locked {a.clock_mhz:g} MHz (boost {boost:g})",
                dram_bytes_per_s=spec.dram_bytes_per_s,
                tensor_paths={k: v.value for k, v in spec.tensor_core_flops_per_s.items()},
                precision=precision_lines(work, spec, a),
                levels=levels,
                change=change,
            )
        )
    t = reports[0].totals
    return Comparison(
        program=reports[0].program,
        precision=a.precision,
        cache=a.cache,
        reference=reports[0].arch,
        flops=t.flops,
        dram_bytes=t.dram_bytes,
        cache_aware_dram_bytes=t.cache_aware_dram_bytes,
        rows=rows,
    )


def compare(
    model_or_path: Any,
    inputs: Sequence[Any] | None = None,
    arch: Sequence[str] = ("L4", "A100-SXM4-80GB", "H100-SXM", "H200-SXM", "B200"),
    assumptions: Assumptions | None = None,
    *,
    mode: str | None = None,
    infer_structure: bool = False,
    train: bool = False,
    loss: str = "sum",
    optimizer: str = "adamw",
    **policy: Any,
) -> Comparison:
    """The program's bounds on every GPU in `arch` as one Comparison (see solar.api.analyze for
    the other arguments)."""
    archs = [arch] if isinstance(arch, str) else list(arch)
    if not archs:
        raise UsageError("no GPU given; pass arch=['L4', 'H100-SXM', ...] (see `solar specs`)")
    a = assumptions_of(assumptions, **policy)
    loaded = load(model_or_path, inputs, mode, infer_structure, train, loss, optimizer)
    reports = analyze_archs(loaded, archs, a)
    return build_comparison(loaded, reports, a)
