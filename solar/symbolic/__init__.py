"""Symbolic (parametric) bounds: sizes of a model file become symbols, and FLOPs, DRAM bytes and
each bound become sympy formulas in them (solar.symbolic.trace: sizes to symbols;
solar.symbolic.counts: isl's parametric counts as sympy; solar.symbolic.bounds: the formulas)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from solar.errors import UsageError
from solar.symbolic.bounds import SymbolicAnalysis, analyze_symbolic
from solar.symbolic.trace import SymbolicError, SymbolicProgram, parse_symbols, symbolic_program

__all__ = [
    "SymbolicAnalysis",
    "SymbolicError",
    "SymbolicProgram",
    "analyze_file",
    "analyze_symbolic",
    "parse_symbols",
    "symbolic_program",
    "trace_file",
]


def trace_file(
    path: str | Path, symbols: Mapping[str, str] | str, train: bool = False
) -> SymbolicProgram:
    """The model file's program with the named module globals (GLOBAL -> SYMBOL) as symbols."""
    from solar.api import load

    if isinstance(symbols, str):
        symbols = parse_symbols(symbols)
    if not isinstance(path, (str, Path)) or str(path).startswith("hf:"):
        raise UsageError("symbolic sizes need a model file whose sizes are module-level integers")
    return symbolic_program(path, dict(symbols), lambda p: load(p, train=train).program)


def analyze_file(
    path: str | Path,
    symbols: Mapping[str, str] | str,
    arch: str | Sequence[str] = "H100-SXM",
    precision: str = "exact",
    clock_mhz: float | None = None,
    cache: str = "cold",
    train: bool = False,
) -> list[SymbolicAnalysis]:
    """Formulas of the file's bounds on each GPU of `arch` (see solar.symbolic.bounds)."""
    from solar.api import check_clock_mhz
    from solar.backends.assumptions import Assumptions
    from solar.hardware import get_spec

    archs = [arch] if isinstance(arch, str) else list(arch)
    specs = [get_spec(a) for a in archs]
    sp = trace_file(path, symbols, train)
    out = []
    for spec in specs:
        a = Assumptions(precision=precision, cache=cache, clock_mhz=check_clock_mhz(clock_mhz))
        out.append(analyze_symbolic(sp, spec, a))
    return out
