"""KernelBench suites: bound every problem of a KernelBench-layout folder in isolated subprocesses,
join measured run times, and report coverage, headroom (measured / bound) and violations.

The names below are imported on first use, so that a submodule run alone (`python -m
solar.kernelbench.supervise`, every worker's supervisor) does not import them all."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Context": "summary",
    "Entry": "headroom",
    "Joined": "headroom",
    "RowViolation": "headroom",
    "join": "headroom",
    "MeasuredFile": "measured",
    "Measurement": "measured",
    "load_measured": "measured",
    "Problem": "problems",
    "find_problems": "problems",
    "write_report": "report",
    "Row": "results",
    "read_rows": "results",
    "RunConfig": "plan",
    "RunStats": "plan",
    "resolve_archs": "plan",
    "run_analysis": "runner",
}

__all__ = [
    "Context",
    "Entry",
    "Joined",
    "MeasuredFile",
    "Measurement",
    "Problem",
    "Row",
    "RunConfig",
    "RunStats",
    "RowViolation",
    "find_problems",
    "join",
    "load_measured",
    "read_rows",
    "resolve_archs",
    "run_analysis",
    "write_report",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'solar.kernelbench' has no attribute {name!r}")
    return getattr(importlib.import_module(f"solar.kernelbench.{module}"), name)
