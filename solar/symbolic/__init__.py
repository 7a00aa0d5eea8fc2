"""Symbolic (parametric) bounds: sizes of a model file become symbols, and FLOPs, DRAM bytes and
each bound become sympy formulas in them (solar.symbolic.trace: sizes to symbols;
solar.symbolic.counts: isl's parametric counts as sympy; solar.symbolic.bounds: the formulas)."""

from __future__ import annotations

import importlib

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
    "analyze_file": "solar.symbolic.bounds",
    "analyze_symbolic": "solar.symbolic.bounds",
    "SymbolicError": "solar.symbolic.trace",
    "SymbolicProgram": "solar.symbolic.trace",
    "parse_symbols": "solar.symbolic.trace",
    "symbolic_program": "solar.symbolic.trace",
    "trace_file": "solar.symbolic.trace",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'solar.symbolic' has no attribute {name!r}")
