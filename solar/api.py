"""The Python API: load a program through its frontend, lift it, and bound it on one or more GPUs.
The CLI is a thin layer over these functions."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from solar.errors import TraceError, UnsupportedOpError, UsageError, message_line
from solar.heap import settled
from solar.ir.nodes import Program, Role
from solar.report import Report, build_report


@dataclass(frozen=True)
class Loaded:
    """A program in the IR plus what its frontend recorded (framework flags, source file)."""

    program: Program
    flags: tuple[tuple[str, bool], ...]
    source_file: str | None
    traced: Any = None
    notes: tuple[str, ...] = ()  # assumption lines from the frontend (module mode, structure used)
    provenance: tuple[Any, ...] = ()  # where each part of the IR came from (frontends.llm.Provenance)
    serving: Any = None  # an hf: step: (hf.Built, Loaded of n layers, of n + 1 layers, how n was chosen)

    @functools.cached_property
    def graph(self) -> Any:
        """The einsum graph of `program`, lifted once: every GPU it is bounded on reuses it and
        what the backends derived from it (footprints, work), so a further GPU costs the pricing."""
        from solar.lift import lift

        return lift(self.program)


FRONTENDS = ("auto", "torch", "jax", "llm")
LLM_HINT = (
    "; an LLM can write the IR instead: set SOLAR_LLM_BASE_URL and SOLAR_LLM_MODEL "
    "(or --llm-base-url/--llm-model), see README \"LLM frontend\""
)


@settled
def load(
    model_or_path: Any,
    inputs: Sequence[Any] | None = None,
    mode: str | None = None,
    infer_structure: bool = False,
    train: bool = False,
    loss: str = "sum",
    optimizer: str = "adamw",
    frontend: str = "auto",
    llm: Any = None,
    share_layers: bool = True,
) -> Loaded:
    """Lower a model file path, or an in-memory torch module with example inputs, to the IR.

    train: one training step (forward, loss, backward, `optimizer` update; see
    solar.frontends.torch.train and solar.frontends.jax.train) instead of the forward pass.

    mode: "train" | "eval" puts the module in that mode before tracing (None: as constructed).
    infer_structure: sample the inputs once and use the structure found (see trace_file).
    frontend: "auto" (the tracer; for a model file, the LLM frontend for what the tracer cannot do
    when `llm`, a solar.frontends.llm.LLMConfig, is given), "torch", "jax" or "llm" (model files).
    share_layers: a PyTorch forward with a stack of identical layers is traced with 4 of them and
    stitched (solar.frontends.torch.share; False: every layer traced)."""
    if train:
        return _load_train(model_or_path, inputs, mode, loss, optimizer)
    if frontend not in FRONTENDS:
        raise UsageError(f"unknown frontend {frontend!r}; use one of {', '.join(FRONTENDS)}")
    if frontend == "llm" and llm is None:
        raise UsageError("--frontend llm needs an endpoint: --llm-base-url and --llm-model (or SOLAR_LLM_BASE_URL, SOLAR_LLM_MODEL)")
    if isinstance(model_or_path, (str, Path)):
        if inputs is not None:
            raise UsageError("inputs are taken from the file's get_inputs(); pass inputs=None with a path")
        if str(model_or_path).startswith("hf:"):
            raise UsageError("an hf: model is one serving step: solar.api.load_hf(spec, Scenario(...)), or `solar analyze hf:... --scenario`")
        from solar.frontends.detect import framework_of

        framework = framework_of(model_or_path)
        if framework == "ir":
            if mode is not None or infer_structure:
                raise UsageError("--mode and --infer-structure apply to PyTorch model files, not to IR text")
            provenance = (_traced("the whole program", "ir"),)
            return Loaded(
                load_ir_file(model_or_path), (), str(Path(model_or_path).resolve()), None,
                (provenance[0].describe(),), provenance,
            )
        if frontend in ("llm", "auto", "torch") and framework != "jax" or frontend == "llm":
            return _load_torch_or_llm(model_or_path, mode, infer_structure, frontend, llm, share_layers)
        if frontend == "torch":
            raise UsageError(f"{model_or_path} is a JAX program (it imports jax, not torch); use --frontend jax or auto")
        if framework == "jax":
            if mode is not None or infer_structure:
                raise UsageError("--mode and --infer-structure apply to PyTorch model files, not to JAX files")
            return _load_jax_file(model_or_path, frontend, llm)
        raise UsageError(f"{model_or_path} is a PyTorch program; use --frontend torch or auto")
    if frontend == "llm":
        raise UsageError("the LLM frontend reads model files; pass a path")
    if isinstance(model_or_path, Program):
        if mode is not None or infer_structure:
            raise UsageError("mode and infer_structure apply to PyTorch programs, not to an IR Program")
        return Loaded(model_or_path, (), None)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        torch = None
    if torch is not None and isinstance(model_or_path, torch.nn.Module):
        if inputs is None:
            raise UsageError("an in-memory module needs example inputs: solar.analyze(model, inputs, arch=...)")
        return _load_torch_module(model_or_path, inputs, mode, infer_structure, share_layers)
    from solar.frontends.jax import is_jax_object

    if is_jax_object(model_or_path):
        if inputs is None:
            raise UsageError("a JAX function or Flax module needs example inputs: solar.analyze(fn, inputs, arch=...)")
        from solar.frontends.jax import lower_callable

        program, traced = lower_callable(model_or_path, inputs)
        return Loaded(program, traced.flags, traced.source_file, traced)
    raise UsageError(
        f"cannot analyse a {type(model_or_path).__name__}; pass a model file path, a torch.nn.Module "
        "or a JAX function / Flax module with inputs, or a solar IR Program"
    )


@settled
def load_hf(spec: str, step: Any) -> Loaded:
    """`hf:<model id or config.json>`: one serving step (solar.frontends.torch.hf.Scenario) of the
    causal LM built from its config, traced as an in-memory module. Identical layers: traced with
    TRACED of them and stitched to N (the per-layer bound is the TRACED + 1 minus TRACED difference);
    otherwise traced whole, and the step built with 0 and 1 decoder layers gives the per-layer bound."""
    from solar.frontends.torch import hf
    from solar.frontends.torch.stitch import TRACED, NotShareable

    spec = spec[3:] if spec.startswith("hf:") else spec
    built = hf.build(spec, step)
    why = f"{built.layers} layers (sharing needs {TRACED})"
    if built.layers >= TRACED:
        small = hf.build(spec, step, layers=TRACED)
        why = hf.unshared(built, small)
        if why is None:
            try:
                return _load_hf_shared(built, small)
            except NotShareable as exc:
                why = str(exc)
    loaded = _load_torch_module(built.module, built.inputs, "eval", False)
    small = [hf.build(spec, step, layers=n) for n in (0, 1)]
    parts = tuple(_load_torch_module(b.module, b.inputs, "eval", False) for b in small)
    line = "per-layer bound: one decoder layer's share (the step built with 0 and with 1 layer; layers identical)"
    notes = (*loaded.notes, *built.notes(), f"layers not shared: {why}")
    return Loaded(loaded.program, loaded.flags, None, loaded.traced, notes, serving=(built, *parts, line))


def _load_hf_shared(built: Any, small: Any) -> Loaded:
    """The step of `built` stitched from a trace of `small` (solar.frontends.torch.stitch); the
    per-layer bound is the difference of the programs of TRACED and TRACED + 1 layers."""
    from solar.frontends.torch import hf, trace_module
    from solar.frontends.torch.stitch import TRACED, lower_shared

    traced = trace_module(small.module, small.inputs, mode="eval")
    shared = lower_shared(traced, hf.layer_list(small)[0])
    program, stitched = shared.at(built.layers)
    parts = []
    for n in (TRACED, TRACED + 1):
        p, t = (program, stitched) if n == built.layers else shared.at(n)
        parts.append(Loaded(p, traced.flags, None, t, tuple(t.notes())))
    line = (
        f"per-layer bound: one decoder layer's share (the step with {TRACED} and with {TRACED + 1} "
        "layers; layers identical)"
    )
    sharing = (
        f"layers shared: layers 2..{built.layers - 2} are copies of layer 1 (identical modules, traced "
        f"{TRACED} of {built.layers} layers)"
    )
    notes = (*stitched.notes(), *built.notes(), sharing)
    return Loaded(program, traced.flags, None, stitched, notes, serving=(built, *parts, line))


def load_ir_file(path: str | Path) -> Program:
    """An IR text file (as `solar ir` prints it), parsed and verified; a problem is one
    IRSyntaxError / IRVerifyError line starting with the file name."""
    from solar.errors import IRSyntaxError, IRVerifyError
    from solar.ir.parser import parse_program
    from solar.ir.verify import verify
    from solar.userfiles import read_text

    name = Path(path).name
    text = read_text(path, "an IR text file", IRSyntaxError)
    try:
        program = parse_program(text)
    except IRSyntaxError as exc:
        raise IRSyntaxError(f"{name}: {exc}") from None
    try:
        verify(program)
    except IRVerifyError as exc:
        raise IRVerifyError(f"{name}: {message_line(exc)}") from None
    if not any(t.role is Role.OUTPUT for t in program.tensors):
        raise IRVerifyError(
            f"{name}: program {program.name!r} declares no output, so there is nothing to bound; "
            "declare what it computes, e.g. `output y: f32[8]`"
        )
    return program


# A locked SM clock outside this range is a typo, not a GPU (datasheet clocks: ~200-3000 MHz).
CLOCK_MHZ_RANGE = (10.0, 10000.0)


def check_clock_mhz(clock_mhz: float | None) -> float | None:
    """A locked clock in MHz: a finite number in CLOCK_MHZ_RANGE (None: the boost clock)."""
    if clock_mhz is None:
        return None
    lo, hi = CLOCK_MHZ_RANGE
    try:
        value = float(clock_mhz)
    except (TypeError, ValueError):
        raise UsageError(f"clock {clock_mhz!r} is not a number; give the locked SM clock in MHz, e.g. 1410") from None
    if isinstance(clock_mhz, bool) or not (lo <= value <= hi):  # also rejects nan and inf
        raise UsageError(
            f"clock {clock_mhz!r} MHz is outside {lo:g}..{hi:g} MHz; give the locked SM clock in MHz, e.g. 1410"
        )
    return value


@settled
def analyze_loaded(
    loaded: Loaded,
    arch: str,
    precision: str = "exact",
    clock_mhz: float | None = None,
    cache: str = "cold",
    writeback: bool = True,
    dispatch_us: float | None = None,
    grid_sync_us: float | None = None,
    measured_ops: Any = None,
) -> Report:
    """The report of a loaded program on `arch`. dispatch_us / grid_sync_us: host dispatch and
    grid-sync floors (microseconds) for the eager_host and recurrence levels, instead of the
    calibrated spec's (docs/BOUNDS.md §17, §18). measured_ops: per-op measured times (a file
    benchmarks/measure_ops.py wrote, or one of its rows as a dict) joined to the ops, ranked by
    time lost (solar.insight_ops)."""
    from solar.backends.assumptions import Assumptions
    from solar.backends.bounds import analyze_graph
    from solar.backends.derived import with_levels
    from solar.hardware import get_spec

    clock_mhz = check_clock_mhz(clock_mhz)
    if not isinstance(arch, str):
        raise UsageError(f"a GPU is named by a string (see `solar specs`), got {type(arch).__name__}")
    spec = get_spec(arch)
    assumptions = Assumptions(
        precision=precision, cache=cache, clock_mhz=clock_mhz, tf32_flags=loaded.flags, writeback=writeback
    )
    graph = loaded.graph
    analysis = analyze_graph(graph, spec, assumptions)
    analysis = with_levels(
        analysis, graph, spec, assumptions, _eager_calls(loaded),
        None if dispatch_us is None else dispatch_us * 1e-6,
        None if grid_sync_us is None else grid_sync_us * 1e-6,
    )
    report = _with_notes(build_report(loaded.program.name, analysis, graph), loaded)
    if loaded.serving is not None:
        report = _with_serving(report, loaded.serving, arch, precision, clock_mhz, cache)
    if measured_ops is not None:
        from solar.insight_ops import measured_ops as join
        from solar.insight_ops import read_rows, with_measured_ops

        name = Path(loaded.source_file).name if loaded.source_file else None
        row = measured_ops if isinstance(measured_ops, dict) else read_rows(measured_ops, name)
        report = with_measured_ops(report, join(loaded, arch, row, precision, clock_mhz))
    return report


def _eager_calls(loaded: Loaded) -> Any:
    """The ops as eager PyTorch runs them, where the torch loader recorded them (else None)."""
    if not getattr(loaded.traced, "eager", ()):
        return None
    from solar.frontends.torch.eager import eager_calls

    return eager_calls(loaded.traced)


def _with_serving(report: Report, serving: Any, arch: str, precision: str, clock_mhz: float | None, cache: str) -> Report:
    from solar.frontends.torch.hf import per_layer
    from solar.report import ServingReport

    built, zero, one, line = serving
    b0, b1 = (analyze_loaded(x, arch, precision, clock_mhz, cache).bounds for x in (zero, one))
    step = built.scenario
    facts = ServingReport(
        model=built.name, scenario=step.kind, batch=step.batch, seq=step.seq, context=step.context,
        layers=built.layers, weight_bytes=built.weight_bytes, kv_cache_bytes=built.kv_cache_bytes,
        per_layer=per_layer(b0, b1),
    )
    return report.model_copy(update={"serving": facts, "assumptions": [*report.assumptions, line]})


def provenance_lines(loaded: Loaded) -> list[str]:
    return [p.describe() for p in loaded.provenance]


def analyze(
    model_or_path: Any,
    inputs: Sequence[Any] | None = None,
    arch: str | Sequence[str] = "H100-SXM",
    precision: str = "exact",
    clock_mhz: float | None = None,
    cache: str = "cold",
    mode: str | None = None,
    infer_structure: bool = False,
    train: bool = False,
    loss: str = "sum",
    optimizer: str = "adamw",
    symbols: Any = None,
    writeback: bool = True,
    measured_ops: Any = None,
    share_layers: bool = True,
) -> Report | list[Report]:
    """Bound a program on a GPU (a Report) or on several (a list of Reports, one per GPU).

    `model_or_path`: a KernelBench-format file or a JAX file, a torch.nn.Module or a JAX callable /
    Flax module (with `inputs`), or an IR Program.
    `precision`: "exact" | "fastest"; `clock_mhz`: a locked SM clock; `cache`: "cold" (L2 flushed
    before the run) | "warm"; `writeback`: output bytes up to the L2 capacity may still be in the
    write-back L2 when the run ends (True) or must reach DRAM (False). Nothing the size of the model is allocated: tracing runs on fake tensors.
    `mode` ("train" | "eval" | None: as constructed), `infer_structure`, and `train` with `loss`
    ("sum" | "mean" | "FILE:function") and `optimizer` ("sgd" | "adamw" | "none"): see `load`.
    `symbols` ({"BATCH": "B"} or "BATCH=B,SEQ=S"): module-level sizes of a model file as symbols;
    returns solar.symbolic.SymbolicAnalysis formulas instead of Reports (docs/BOUNDS.md §14).
    `measured_ops`: per-op measured times (see analyze_loaded); `share_layers`: see `load`."""
    if symbols is not None:
        from solar.backends.assumptions import Assumptions
        from solar.symbolic import analyze_file

        a = Assumptions(precision=precision, cache=cache, clock_mhz=check_clock_mhz(clock_mhz))
        out = analyze_file(model_or_path, symbols, lambda p: load(p, train=train).program, arch, a)
        return out[0] if isinstance(arch, str) else out
    loaded = load(model_or_path, inputs, mode, infer_structure, train, loss, optimizer, share_layers=share_layers)
    reports = analyze_archs(
        loaded, [arch] if isinstance(arch, str) else list(arch), precision, clock_mhz, cache, writeback,
        measured_ops=measured_ops,
    )
    return reports[0] if isinstance(arch, str) else reports


@settled
def analyze_archs(
    loaded: Loaded,
    archs: Sequence[str],
    precision: str = "exact",
    clock_mhz: float | None = None,
    cache: str = "cold",
    writeback: bool = True,
    on_arch: Callable[[str], None] | None = None,
    **kwargs: Any,
) -> list[Report]:
    """One Report per GPU of a loaded program (its graph lifted once), every name checked before
    any work; `on_arch(name)` before each GPU is priced; `kwargs` as analyze_loaded takes them."""
    from solar.hardware import get_spec

    if not archs:
        raise UsageError("no GPU given; pass arch='H100-SXM' or a list of names (see `solar specs`)")
    for a in archs:
        if isinstance(a, str):
            get_spec(a)
    reports = []
    for a in archs:
        if on_arch is not None:
            on_arch(a)
        reports.append(analyze_loaded(loaded, a, precision, clock_mhz, cache, writeback, **kwargs))
    return reports


def ir_text(
    model_or_path: Any, inputs: Sequence[Any] | None = None, mode: str | None = None,
    infer_structure: bool = False, frontend: str = "auto", llm: Any = None, share_layers: bool = True,
) -> str:
    """The IR text, headed by `#` comment lines saying where each part came from when a part is
    not traced (the parser skips comments, so the text parses as printed)."""
    loaded = load(model_or_path, inputs, mode, infer_structure, frontend=frontend, llm=llm, share_layers=share_layers)
    traced_only = all(p.source != "llm" for p in loaded.provenance)
    head = "" if traced_only else "".join(f"# {line}\n" for line in provenance_lines(loaded))
    return head + str(loaded.program)


def einsum_text(
    model_or_path: Any, inputs: Sequence[Any] | None = None, mode: str | None = None,
    infer_structure: bool = False, share_layers: bool = True,
) -> str:
    from solar.lift import format_graph, lift

    return format_graph(lift(load(model_or_path, inputs, mode, infer_structure, share_layers=share_layers).program))


# ---- PyTorch loading with a module mode and inferred structure -----------------------------------


def _load_torch_file(
    path: str | Path, mode: str | None, infer_structure: bool, llm: Any = None, share_layers: bool = False
) -> Loaded:
    """Trace and lower; with `llm`, ops without a lowering are synthesised by the model (and every
    layer is traced: the model's rules are asked per traced op)."""
    from solar.frontends.torch import lower_traced, share, trace_file

    if share_layers and llm is None:
        return _shared_loaded(share.trace_file(path, mode, infer_structure))
    traced = trace_file(path, mode, infer_structure)
    fallback = None
    if llm is not None:
        from solar.frontends.llm import LLMOpRules

        fallback = LLMOpRules(llm)
    program = lower_traced(traced, fallback)
    synthesised = tuple(fallback.provenance) if fallback is not None else ()
    part = "the rest of the program" if synthesised else "the whole program"
    provenance = (_traced(part), *synthesised)
    notes = (*traced.notes(), *(p.describe() for p in provenance))
    return Loaded(program, traced.flags, traced.source_file, traced, notes, provenance)


def _load_jax_file(path: str | Path, frontend: str, llm: Any) -> Loaded:
    """jax.make_jaxpr first; in "auto" mode with an endpoint, a program it cannot trace goes to
    the LLM frontend."""
    from solar.frontends.jax import lower_file as lower_jax_file

    try:
        program, traced = lower_jax_file(path)
    except (TraceError, UnsupportedOpError) as exc:
        if frontend == "auto" and llm is None:
            raise type(exc)(f"{exc}{LLM_HINT}") from None
        if frontend != "auto":
            raise
        from solar.frontends.llm import lower_file

        program, provenance = lower_file(path, llm, str(exc))
        return Loaded(program, (), str(Path(path).resolve()), None, (provenance.describe(),), (provenance,))
    provenance = (_traced("the whole program"),)
    return Loaded(program, traced.flags, traced.source_file, traced, (provenance[0].describe(),), provenance)


def _traced(part: str, source: str = "traced") -> Any:
    from solar.frontends.llm.synth import Provenance

    return Provenance(part, source)


def _load_torch_or_llm(
    path: str | Path, mode: str | None, infer_structure: bool, frontend: str, llm: Any, share_layers: bool = True
) -> Loaded:
    """The torch tracer first (unless frontend is "llm"); in "auto" mode with an endpoint, what it
    cannot do goes to the LLM frontend: a missing op alone, a program it cannot trace whole."""
    from solar.errors import LLMError
    from solar.frontends.torch.loader import framework_flags

    error = "(not traced: --frontend llm)"
    if frontend != "llm":
        try:
            return _load_torch_file(path, mode, infer_structure, llm if frontend == "auto" else None, share_layers)
        except (TraceError, UnsupportedOpError) as exc:
            if frontend == "auto" and llm is None:
                raise type(exc)(f"{exc}{LLM_HINT}") from None
            if frontend != "auto":
                raise
            error = str(exc)
        except LLMError as exc:  # a missing op the model could not write: try the whole program
            error = str(exc)
    if mode is not None or infer_structure:
        raise UsageError("--mode and --infer-structure apply to traced programs, not to the LLM frontend")
    from solar.frontends.llm import lower_file

    program, provenance = lower_file(path, llm, error)
    notes = (provenance.describe(),)
    return Loaded(program, framework_flags(), str(Path(path).resolve()), None, notes, (provenance,))



def _load_torch_module(
    model: Any, inputs: Sequence[Any], mode: str | None, infer_structure: bool, share_layers: bool = False
) -> Loaded:
    """An in-memory module traced and lowered (`share_layers`: see solar.frontends.torch.share; off
    by default: the `hf:` steps decide sharing themselves and call this for a full trace)."""
    from solar.frontends.torch import lower_traced, share, trace_module

    if share_layers:
        return _shared_loaded(share.trace_module(model, inputs, mode=mode, infer_structure=infer_structure))
    traced = trace_module(model, inputs, mode=mode, infer_structure=infer_structure)
    return Loaded(lower_traced(traced), traced.flags, None, traced, tuple(traced.notes()))


def _shared_loaded(outcome: Any) -> Loaded:
    """The Loaded of a share.Outcome: its stitched program, or its full trace lowered; the note on
    sharing after the trace's own (and the provenance line of a model file, as _load_torch_file)."""
    from solar.frontends.torch import lower_traced

    traced = outcome.traced
    program = outcome.program if outcome.program is not None else lower_traced(traced)
    provenance = (_traced("the whole program"),) if traced.source_file else ()
    notes = (*traced.notes(), *(p.describe() for p in provenance), *([outcome.note] if outcome.note else []))
    return Loaded(program, traced.flags, traced.source_file, traced, notes, provenance)


def _load_train(model_or_path: Any, inputs: Sequence[Any] | None, mode: str | None, loss: str,
                optimizer: str) -> Loaded:
    """One training step of a PyTorch file or module, or of a JAX file or function."""
    if isinstance(model_or_path, (str, Path)):
        from solar.frontends.detect import framework_of

        if framework_of(model_or_path) == "jax":
            from solar.frontends.jax.train import lower_train_file

            program, traced, notes = lower_train_file(model_or_path, loss, optimizer)
            return Loaded(program, traced.flags, traced.source_file, traced, tuple(notes))
        if inputs is not None:
            raise UsageError("inputs are taken from the file's get_inputs(); pass inputs=None with a path")
        from solar.frontends.torch.train import lower_train, trace_train_file

        tt = trace_train_file(model_or_path, loss, optimizer, mode or "train")
    else:
        import torch

        if not isinstance(model_or_path, torch.nn.Module) or inputs is None:
            raise UsageError("train=True takes a model file, or a torch.nn.Module with example inputs")
        from solar.frontends.torch.train import lower_train, trace_train_module

        tt = trace_train_module(model_or_path, inputs, loss, optimizer, mode or "train")
    tp = lower_train(tt)
    mode = f"module mode: {tt.traced.mode} (model.{tt.traced.mode}()), with gradients"
    notes = [mode, *tt.traced.notes()[1:], *tp.notes(tt)]
    return Loaded(tp.program, tt.flags, tt.source_file, tt, tuple(notes))


def _with_notes(report: Report, loaded: Loaded) -> Report:
    """The report with the frontend's assumption lines and the IR's provenance."""
    from solar.report import ProvenanceReport

    update: dict[str, Any] = {}
    if loaded.notes:
        update["assumptions"] = [*report.assumptions, *loaded.notes]
    if loaded.provenance:
        update["provenance"] = [
            ProvenanceReport(
                part=p.part, source=p.source, model=p.model, attempts=p.attempts, requests=p.requests,
                max_error=p.max_error, shapes=list(p.shapes), cached=p.cached,
            )
            for p in loaded.provenance
        ]
    return report.model_copy(update=update) if update else report
