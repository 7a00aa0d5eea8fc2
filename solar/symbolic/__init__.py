"""Symbolic (parametric) bounds: sizes of a model file become symbols, and FLOPs, DRAM bytes and
each bound become sympy formulas in them (solar.symbolic.trace: sizes to symbols;
solar.symbolic.counts: isl's parametric counts as sympy; solar.symbolic.bounds: the formulas)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from solar.errors import UsageError

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
# sympy, isl and the backends load on first use: `solar --help` and every other command import
# this package (the CLI registers --symbolic) and must not pay for them.
_LAZY = {
    "SymbolicAnalysis": "solar.symbolic.bounds",
    "analyze_symbolic": "solar.symbolic.bounds",
    "SymbolicError": "solar.symbolic.trace",
    "SymbolicProgram": "solar.symbolic.trace",
    "parse_symbols": "solar.symbolic.trace",
    "symbolic_program": "solar.symbolic.trace",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'solar.symbolic' has no attribute {name!r}")


def trace_file(
    path: str | Path, symbols: Mapping[str, str] | str, train: bool = False
) -> SymbolicProgram:
    """The model file's program with the named module globals (GLOBAL -> SYMBOL) as symbols."""
    from solar.api import load
    from solar.symbolic.trace import parse_symbols, symbolic_program

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
):
    """Formulas of the file's bounds on each GPU of `arch` (see solar.symbolic.bounds)."""
    from solar.api import check_clock_mhz
    from solar.backends.assumptions import Assumptions
    from solar.hardware import get_spec
    from solar.symbolic.bounds import analyze_symbolic

    archs = [arch] if isinstance(arch, str) else list(arch)
    specs = [get_spec(a) for a in archs]
    sp = trace_file(path, symbols, train)
    out = []
    for spec in specs:
        a = Assumptions(precision=precision, cache=cache, clock_mhz=check_clock_mhz(clock_mhz))
        out.append(analyze_symbolic(sp, spec, a))
    return out
