"""Bounds on runtime: work and compute time, DRAM bytes, fused and unfused bounds, assumptions."""

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import Analysis, Bound, OpCost, Totals, analyze, analyze_graph
from solar.backends.compute import ComputeTime, compute_time
from solar.backends.work import Work, node_work

__all__ = [
    "Analysis",
    "Assumptions",
    "Bound",
    "ComputeTime",
    "OpCost",
    "Totals",
    "Work",
    "analyze",
    "analyze_graph",
    "compute_time",
    "node_work",
]
