"""The Python API: load a program through its frontend, lift it, and bound it on one or more GPUs.
The CLI is a thin layer over these functions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from solar.errors import UsageError
from solar.ir.nodes import Program
from solar.report import Report, build_report


@dataclass(frozen=True)
class Loaded:
    """A program in the IR plus what its frontend recorded (framework flags, source file)."""

    program: Program
    flags: tuple[tuple[str, bool], ...]
    source_file: str | None
    traced: Any = None


def load(model_or_path: Any, inputs: Sequence[Any] | None = None) -> Loaded:
    """Lower a model file path, or an in-memory torch module with example inputs, to the IR."""
    if isinstance(model_or_path, (str, Path)):
        if inputs is not None:
            raise UsageError("inputs are taken from the file's get_inputs(); pass inputs=None with a path")
        from solar.frontends.torch import lower_file

        program, traced = lower_file(model_or_path)
        return Loaded(program, traced.flags, traced.source_file, traced)
    if isinstance(model_or_path, Program):
        return Loaded(model_or_path, (), None)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        torch = None
    if torch is not None and isinstance(model_or_path, torch.nn.Module):
        if inputs is None:
            raise UsageError("an in-memory module needs example inputs: solar.analyze(model, inputs, arch=...)")
        from solar.frontends.torch import lower_module

        program, traced = lower_module(model_or_path, inputs)
        return Loaded(program, traced.flags, None, traced)
    raise UsageError(
        f"cannot analyse a {type(model_or_path).__name__}; pass a model file path, a torch.nn.Module "
        "with inputs, or a solar IR Program"
    )


def analyze_loaded(
    loaded: Loaded,
    arch: str,
    precision: str = "exact",
    clock_mhz: float | None = None,
    cache: str = "cold",
) -> Report:
    from solar.backends.assumptions import Assumptions
    from solar.backends.bounds import analyze_graph
    from solar.hardware import get_spec
    from solar.lift import lift

    spec = get_spec(arch)
    assumptions = Assumptions(precision=precision, cache=cache, clock_mhz=clock_mhz, tf32_flags=loaded.flags)
    graph = lift(loaded.program)
    analysis = analyze_graph(graph, spec, assumptions)
    return build_report(loaded.program.name, analysis, graph)


def analyze(
    model_or_path: Any,
    inputs: Sequence[Any] | None = None,
    arch: str | Sequence[str] = "H100-SXM",
    precision: str = "exact",
    clock_mhz: float | None = None,
    cache: str = "cold",
) -> Report | list[Report]:
    """Bound a program on a GPU (a Report) or on several (a list of Reports, one per GPU).

    `model_or_path`: a KernelBench-format file, a torch.nn.Module (with `inputs`), or an IR Program.
    `precision`: "exact" | "fastest"; `clock_mhz`: a locked SM clock; `cache`: "cold" (L2 flushed
    before the run) | "warm". Nothing the size of the model is allocated: tracing runs on fake tensors."""
    loaded = load(model_or_path, inputs)
    archs = [arch] if isinstance(arch, str) else list(arch)
    if not archs:
        raise UsageError("no GPU given; pass arch='H100-SXM' or a list of names (see `solar specs`)")
    reports = [analyze_loaded(loaded, a, precision, clock_mhz, cache) for a in archs]
    return reports[0] if isinstance(arch, str) else reports


def ir_text(model_or_path: Any, inputs: Sequence[Any] | None = None) -> str:
    return str(load(model_or_path, inputs).program)


def einsum_text(model_or_path: Any, inputs: Sequence[Any] | None = None) -> str:
    from solar.lift import format_graph, lift

    return format_graph(lift(load(model_or_path, inputs).program))
