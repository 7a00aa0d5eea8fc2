"""Bounds on runtime: work and compute time, DRAM bytes (compulsory and cache-aware), the fused,
cache-aware and unfused bounds, assumptions, the bound levels.

The names below are imported on first use, so that a light submodule (the level table, the
assumptions) does not bring in the LP solver."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Assumptions": "assumptions",
    "Analysis": "bounds",
    "Bound": "bounds",
    "OpCost": "bounds",
    "Totals": "bounds",
    "analyze": "bounds",
    "analyze_graph": "bounds",
    "Traffic": "cache",
    "cache_aware_traffic": "cache",
    "ContractionIO": "capacity",
    "contraction_io": "capacity",
    "ComputeTime": "compute",
    "compute_time": "compute",
    "Level": "levels",
    "Reread": "reread",
    "find_rereads": "reread",
    "Work": "work",
    "node_work": "work",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'solar.backends' has no attribute {name!r}")
    return getattr(importlib.import_module(f"solar.backends.{_EXPORTS[name]}"), name)
