"""The Python API: load a program through its frontend (solar.frontends.select), lift it, and bound
it on one or more GPUs under one set of Assumptions. The CLI is a thin layer over these functions."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

from solar.backends.assumptions import CLOCK_MHZ_RANGE, Assumptions, check_clock_mhz
from solar.errors import UsageError
from solar.frontends.detect import FRONTENDS
from solar.frontends.loaded import Loaded, Provenance, Serving, eager_calls, provenance_lines
from solar.frontends.select import (
    LLM_HINT,
    check_file,
    check_sharded,
    load,
    load_hf,
    load_ir_file,
    load_module,
)
from solar.hardware import get_spec
from solar.hardware.host import get_host
from solar.heap import settled
from solar.lift import format_graph, lift
from solar.report import ProvenanceReport, Report, ServingReport, build_report
from solar.report.measured_ops import SLACK, MeasuredOp, MeasuredOps, read_rows, with_measured_ops

__all__ = [
    "CLOCK_MHZ_RANGE", "FRONTENDS", "LLM_HINT", "POLICY", "Loaded", "Provenance", "Serving", "analyze",
    "analyze_archs", "analyze_loaded", "assumptions_of", "check_clock_mhz", "check_file", "check_sharded", "eager_calls", "einsum_text",
    "ir_text", "join_measured_ops", "load", "load_hf", "load_ir_file", "load_module", "provenance_lines",
]

POLICY = ("precision", "clock_mhz", "cache", "writeback")  # the order callers pass them positionally


def assumptions_of(assumptions: Assumptions | str | None = None, *policy: Any, **options: Any) -> Assumptions:
    """The Assumptions of a request, its clock checked: `assumptions` as given, or built from the
    separate POLICY arguments, positional (a str first: the precision) or keyword (None: the
    default)."""
    if isinstance(assumptions, Assumptions):
        if policy or any(v is not None for v in options.values()):
            raise UsageError("pass an Assumptions or precision / clock_mhz / cache / writeback, not both")
        return replace(assumptions, clock_mhz=check_clock_mhz(assumptions.clock_mhz))
    given = () if assumptions is None else (assumptions, *policy)
    if len(given) > len(POLICY):
        raise TypeError(f"at most {len(POLICY)} policy arguments ({', '.join(POLICY)}), got {len(given)}")
    values = dict(zip(POLICY, given))
    for name, value in options.items():
        if name not in POLICY:
            raise TypeError(f"unexpected keyword argument {name!r}")
        if value is None:
            continue
        if name in values:
            raise TypeError(f"got multiple values for argument {name!r}")
        values[name] = value
    values["clock_mhz"] = check_clock_mhz(values.get("clock_mhz"))
    return Assumptions(**values)


@settled
def analyze_loaded(
    loaded: Loaded,
    arch: str,
    assumptions: Assumptions | str | None = None,
    *policy: Any,
    dispatch_us: float | None = None,
    grid_sync_us: float | None = None,
    measured_ops: Any = None,
    host: str | None = None,
    **options: Any,
) -> Report:
    """The report of a loaded program on `arch` under `assumptions` (its TF32 flags are the
    program's; or the POLICY arguments, positional or keyword, as assumptions_of takes them).
    dispatch_us / grid_sync_us: host dispatch and grid-sync floors (microseconds) for the
    eager_host and recurrence levels, instead of the host profile's and the calibrated spec's
    (docs/BOUNDS.md §17, §18). host: the host profile (a name in hardware_specs/hosts/ or a path)
    whose dispatch floors bound eager_host; None: the default profile.
    measured_ops: per-op measured times (a file benchmarks/measure_ops.py wrote, or one of its rows
    as a dict) joined to the ops, ranked by time lost (see join_measured_ops)."""
    bounds, derived, _ = _backends()
    a = assumptions_of(assumptions, *policy, **options)
    if not isinstance(arch, str):
        raise UsageError(f"a GPU is named by a string (see `solar specs`), got {type(arch).__name__}")
    spec = get_spec(arch)
    profile = None if host is None else get_host(host)
    a = replace(a, tf32_flags=loaded.flags)
    graph = loaded.graph
    analysis = bounds.analyze_graph(graph, spec, a)
    analysis = derived.with_levels(
        analysis, graph, spec, a, eager_calls(loaded),
        None if dispatch_us is None else dispatch_us * 1e-6,
        None if grid_sync_us is None else grid_sync_us * 1e-6,
        host=profile,
    )
    report = _with_notes(build_report(loaded.program.name, analysis, graph), loaded)
    if loaded.serving is not None:
        report = _with_serving(report, loaded.serving, arch, a)
    if measured_ops is not None:
        name = Path(loaded.source_file).name if loaded.source_file else None
        row = measured_ops if isinstance(measured_ops, dict) else read_rows(measured_ops, name)
        report = with_measured_ops(report, join_measured_ops(loaded, arch, row, a))
    return report


@settled
def analyze_archs(
    loaded: Loaded,
    archs: Sequence[str],
    assumptions: Assumptions | str | None = None,
    *policy: Any,
    on_arch: Callable[[str], None] | None = None,
    dispatch_us: float | None = None,
    grid_sync_us: float | None = None,
    measured_ops: Any = None,
    host: str | None = None,
    **options: Any,
) -> list[Report]:
    """One Report per GPU of a loaded program (its graph lifted once), every name checked before
    any work; `on_arch` is called with each GPU's name before it is priced; the other arguments as
    analyze_loaded takes them."""
    if not archs:
        raise UsageError("no GPU given; pass arch='H100-SXM' or a list of names (see `solar specs`)")
    for name in archs:
        if isinstance(name, str):
            get_spec(name)
    if host is not None:
        get_host(host)
    a = assumptions_of(assumptions, *policy, **options)
    reports = []
    for name in archs:
        if on_arch is not None:
            on_arch(name)
        reports.append(analyze_loaded(
            loaded, name, a, dispatch_us=dispatch_us, grid_sync_us=grid_sync_us, measured_ops=measured_ops,
            host=host,
        ))
    return reports


def analyze(
    model_or_path: Any,
    inputs: Sequence[Any] | None = None,
    arch: str | Sequence[str] = "H100-SXM",
    assumptions: Assumptions | None = None,
    *,
    mode: str | None = None,
    infer_structure: bool = False,
    train: bool = False,
    loss: str = "sum",
    optimizer: str = "adamw",
    symbols: Any = None,
    measured_ops: Any = None,
    share_layers: bool = True,
    **policy: Any,
) -> Report | list[Report]:
    """Bound a program on a GPU (a Report) or on several (a list of Reports, one per GPU).

    `model_or_path`: a KernelBench-format file or a JAX file, a torch.nn.Module or a JAX callable /
    Flax module (with `inputs`), or an IR Program.
    `assumptions` (solar.backends.assumptions.Assumptions), or as keywords: `precision`: "exact" |
    "fastest"; `clock_mhz`: a locked SM clock; `cache`: "cold" (L2 flushed before the run) | "warm";
    `writeback`: output bytes up to the L2 capacity may still be in the write-back L2 when the run
    ends (True) or must reach DRAM (False). Nothing the size of the model is allocated: tracing runs
    on fake tensors.
    `mode` ("train" | "eval" | None: as constructed), `infer_structure`, and `train` with `loss`
    ("sum" | "mean" | "FILE:function") and `optimizer` ("sgd" | "adamw" | "none"): see `load`.
    `symbols` ({"BATCH": "B"} or "BATCH=B,SEQ=S"): module-level sizes of a model file as symbols;
    returns solar.symbolic.SymbolicAnalysis formulas instead of Reports (docs/BOUNDS.md §14).
    `measured_ops`: per-op measured times (see analyze_loaded); `share_layers`: see `load`."""
    a = assumptions_of(assumptions, **policy)
    if symbols is not None:
        from solar.symbolic import analyze_file  # imports sympy

        a = replace(a, writeback=True)  # the symbolic bounds take the write-back default
        out = analyze_file(model_or_path, symbols, lambda p: load(p, train=train).program, arch, a)
        return out[0] if isinstance(arch, str) else out
    loaded = load(model_or_path, inputs, mode, infer_structure, train, loss, optimizer, share_layers=share_layers)
    reports = analyze_archs(loaded, [arch] if isinstance(arch, str) else list(arch), a, measured_ops=measured_ops)
    return reports[0] if isinstance(arch, str) else reports


def ir_text(
    model_or_path: Any, inputs: Sequence[Any] | None = None, mode: str | None = None,
    infer_structure: bool = False, frontend: str = "auto", llm: Any = None, share_layers: bool = True,
    debug: bool = False,
) -> str:
    """The IR text, headed by `#` comment lines saying where each part came from when a part is
    not traced (the parser skips comments, so the text parses as printed)."""
    loaded = load(
        model_or_path, inputs, mode, infer_structure, frontend=frontend, llm=llm, share_layers=share_layers,
        debug=debug,
    )
    traced_only = all(p.source != "llm" for p in loaded.provenance)
    head = "" if traced_only else "".join(f"# {line}\n" for line in provenance_lines(loaded))
    return head + str(loaded.program)


def einsum_text(
    model_or_path: Any, inputs: Sequence[Any] | None = None, mode: str | None = None,
    infer_structure: bool = False, share_layers: bool = True, debug: bool = False,
) -> str:
    loaded = load(model_or_path, inputs, mode, infer_structure, share_layers=share_layers, debug=debug)
    return format_graph(lift(loaded.program))


def join_measured_ops(
    loaded: Loaded, arch: str, row: dict[str, Any], assumptions: Assumptions | None = None
) -> MeasuredOps:
    """Join the per-op `row` (solar.report.measured_ops) to the eager calls of `loaded` on `arch`,
    under the precision and clock of `assumptions` (cold cache, write-back).

    The join: the profiled top-level ops and the eager calls solar recorded from the exported graph
    (solar.frontends.torch.eager) are both in program order and named by their ATen op; the two name
    sequences are aligned (longest matching blocks), so an op one side has and the other lacks costs
    only itself. Each matched op's bound is its device floor in the eager_host pipeline
    (solar.backends.dispatch.eager_stages: the unfused per-kernel bound of the op instance it became,
    raised to a recurrence's critical path), which docs/BOUNDS.md §19 shows is a lower bound on that
    op's kernel time inside the program, in a run that starts with L2 flushed as the profiler's does.
    Device work no call accounts for (entry 0 of the stages) is compared with the unattributed time."""
    bounds, derived, dispatch = _backends()
    calls = eager_calls(loaded)
    problem = str(row.get("problem", loaded.program.name))
    if not calls:
        raise UsageError(f"{problem}: per-op times join the eager calls of a traced PyTorch forward; this program has none")
    spec = get_spec(arch)
    given = assumptions or Assumptions()
    assumptions = Assumptions(precision=given.precision, clock_mhz=given.clock_mhz, tf32_flags=loaded.flags)
    a = bounds.analyze_graph(loaded.graph, spec, assumptions)
    rec = derived.recurrence_level(a, loaded.graph, spec, assumptions)
    stages = dispatch.eager_stages(a, calls, rec.instance_floors if rec is not None else {})
    rows_by_instance = {op.instance: op for op in a.ops if op.instance is not None}
    measured = row["ops"]
    left = [_aten_name(str(m["op"])) for m in measured]
    right = [_aten_name(c.op) for c in calls]
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    ops: list[MeasuredOp] = []
    violations: list[str] = []
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            m, i = measured[block.a + k], block.b + k
            call = calls[i]
            bound = stages.device[i + 1]
            r = rows_by_instance.get(call.instance)
            seconds = float(m["kernel_seconds"])
            ops.append(MeasuredOp(
                index=i, profiled_index=block.a + k, op=call.op, source="" if r is None else r.source, module="" if r is None else r.module,
                kernels=int(m.get("kernels", 0)), measured_seconds=seconds, bound_seconds=bound,
                lost_seconds=seconds - bound, binds="" if r is None or bound == 0 else r.binds,
            ))
            if seconds < bound * (1 - SLACK):
                violations.append(f"{call.op} #{i}: measured {seconds * 1e6:.3f} µs < bound {bound * 1e6:.3f} µs")
    unattributed = float(row.get("unattributed_kernel_seconds", 0.0))
    ops.sort(key=lambda o: -o.lost_seconds)
    return MeasuredOps(
        problem=problem, arch=spec.name, measured_on=str(row.get("arch", "")), matched=len(ops), unmatched_measured=len(left) - len(ops),
        unmatched_calls=len(right) - len(ops),
        measured_seconds=float(row.get("total_kernel_seconds", sum(o.measured_seconds for o in ops) + unattributed)),
        unattributed_seconds=unattributed, unattributed_bound_seconds=stages.device[0],
        violations=violations, ops=ops,
    )


def _backends() -> tuple[ModuleType, ModuleType, ModuleType]:
    """solar.backends' bounds, derived levels and dispatch, imported on first use (the compute LP
    imports scipy.optimize, which `import solar.api` does not pay for)."""
    from solar.backends import bounds, derived, dispatch

    return bounds, derived, dispatch


def _aten_name(op: str) -> str:
    """aten::add_ and aten.add_.Tensor both -> add_."""
    if op.startswith("aten::"):
        return op[len("aten::"):]
    parts = op.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "aten" else op


def _with_serving(report: Report, serving: Serving, arch: str, assumptions: Assumptions) -> Report:
    """The report with the serving step's facts and its per-layer bound (the difference of the
    bounds of its two part programs, written back or not as the default)."""
    from solar.frontends.torch.hf import per_layer  # imports torch

    zero, one = serving.parts
    b0, b1 = (analyze_loaded(x, arch, replace(assumptions, writeback=True)).bounds for x in (zero, one))
    built = serving.built
    step = built.scenario
    facts = ServingReport(
        model=built.name, scenario=step.kind, batch=step.batch, seq=step.seq, context=step.context,
        layers=built.layers, weight_bytes=built.weight_bytes, kv_cache_bytes=built.kv_cache_bytes,
        per_layer=per_layer(b0, b1),
    )
    return report.model_copy(update={"serving": facts, "assumptions": [*report.assumptions, serving.line]})


def _with_notes(report: Report, loaded: Loaded) -> Report:
    """The report with the frontend's assumption lines and notices, and the IR's provenance."""
    update: dict[str, Any] = {}
    if loaded.notes:
        update["assumptions"] = [*report.assumptions, *loaded.notes]
    if loaded.notices:
        update["notices"] = [*report.notices, *loaded.notices]
    if loaded.provenance:
        update["provenance"] = [
            ProvenanceReport(
                part=p.part, source=p.source, model=p.model, attempts=p.attempts, requests=p.requests,
                max_error=p.max_error, shapes=list(p.shapes), cached=p.cached,
            )
            for p in loaded.provenance
        ]
    return report.model_copy(update=update) if update else report
