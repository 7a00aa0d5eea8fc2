"""`solar validate`: measure a program on the GPU at hand, compute its bounds for that GPU, and
report headroom (measured / SOL) and every violation (a measured time below a bound that claims to
be a lower bound for that execution) — a violation is a bug in solar, never to be tuned away."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict

from solar.api import analyze_loaded, load
from solar.backends.levels import COMPILE, EAGER, Level, Violation, headroom, violations
from solar.errors import SolarError
from solar.validate.device import detect_spec, environment, query_device, require_cuda
from solar.validate.timing import time_cuda


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModeTiming(_Model):
    median_seconds: float
    min_seconds: float
    reps: int


class ValidationResult(_Model):
    problem: str
    arch: str
    date: str
    environment: dict[str, str]
    assumptions: list[str]
    measured: dict[str, ModeTiming]
    bounds: dict[str, float]
    bottlenecks: dict[str, str]
    headroom: dict[str, float]  # measured median / fused bound, per mode
    violations: list[Violation]
    error: str | None = None

    def to_json(self) -> str:
        return self.model_dump_json()


def assemble(
    problem: str,
    report: Any,
    measured: dict[str, ModeTiming],
    environment: dict[str, str],
    error: str | None = None,
) -> ValidationResult:
    """A ValidationResult from an analysis report (solar.report.Report) and measured timings."""
    bounds = {level: b.seconds for level, b in report.bounds.items()}
    fused = bounds.get(Level.FUSED)
    return ValidationResult(
        problem=problem,
        arch=report.arch,
        date=_dt.date.today().isoformat(),
        environment=environment,
        assumptions=list(report.assumptions),
        measured=measured,
        bounds=bounds,
        bottlenecks={level: b.bottleneck for level, b in report.bounds.items()},
        headroom={m: h for m, t in measured.items() if (h := headroom(t.median_seconds, fused)) is not None},
        violations=violations(bounds, {m: t.min_seconds for m, t in measured.items()}),
        error=error,
    )


def to_device(x: Any, torch: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.cuda()
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, torch) for v in x)
    return x


def measure(
    model: Any, inputs: Sequence[Any], compile: bool = False, reps: int = 50
) -> tuple[dict[str, ModeTiming], str | None]:
    """Time `model(*inputs)` on the GPU eagerly (and under torch.compile): {mode: timing}, and the
    reason torch.compile failed if it did. Needs only torch (no analysis)."""

    torch = require_cuda()
    l2 = query_device().l2_bytes
    model = model.cuda()
    args = to_device(list(inputs), torch)
    measured = {EAGER: ModeTiming(**time_cuda(lambda: model(*args), l2, reps).__dict__)}
    error = None
    if compile:
        try:
            compiled = torch.compile(model)
            t = time_cuda(lambda: compiled(*args), l2, reps, warmup=3)
            measured[COMPILE] = ModeTiming(**t.__dict__)
        except Exception as exc:  # torch.compile failing is recorded, not fatal
            error = f"torch.compile failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return measured, error


def validate_module(
    model: Any,
    inputs: Sequence[Any],
    problem: str,
    arch: str | None = None,
    compile: bool = False,
    reps: int = 50,
    loaded: Any = None,
    host: str | None = None,
) -> ValidationResult:
    """Time `model(*inputs)` eagerly (and compiled) on the GPU and compare with its bounds (the
    eager_host level from host profile `host`: None, the default profile)."""

    spec_name = arch or detect_spec(query_device()).name
    if loaded is None:
        loaded = load(model, inputs)  # traced on fake tensors, before anything moves to the GPU
    report = analyze_loaded(loaded, spec_name, host=host)
    measured, error = measure(model, inputs, compile, reps)
    return assemble(problem, report, measured, environment(), error)


def build_on_gpu(path: str | Path) -> tuple[Any, list]:
    """Model(*get_init_inputs()) and get_inputs() of a KernelBench-format file, made on the GPU."""
    from solar.frontends.torch.loader import import_model_file

    torch = require_cuda()
    module = import_model_file(path)
    torch.manual_seed(0)
    try:
        with torch.device("cuda"):
            model = module.Model(*getattr(module, "get_init_inputs", lambda: [])())
            inputs = list(module.get_inputs())
    except Exception as exc:
        raise SolarError(f"{Path(path).name}: building the model on the GPU failed: {exc}") from None
    return model, inputs


def validate_file(
    path: str | Path, arch: str | None = None, compile: bool = False, reps: int = 50, host: str | None = None,
) -> ValidationResult:
    """Validate a KernelBench-format file: build Model(*get_init_inputs()) and get_inputs() for real."""
    loaded = load(str(path))
    model, inputs = build_on_gpu(path)
    return validate_module(model, inputs, Path(path).name, arch, compile, reps, loaded=loaded, host=host)


__all__ = [
    "ModeTiming",
    "ValidationResult",
    "assemble",
    "build_on_gpu",
    "measure",
    "validate_file",
    "validate_module",
]
