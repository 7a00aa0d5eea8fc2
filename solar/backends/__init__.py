"""Bounds on runtime: work and compute time, DRAM bytes (compulsory and cache-aware), the fused,
cache-aware and unfused bounds, assumptions."""

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import Analysis, Bound, OpCost, Totals, analyze, analyze_graph
from solar.backends.cache import Traffic, cache_aware_traffic
from solar.backends.capacity import ContractionIO, contraction_io
from solar.backends.compute import ComputeTime, compute_time
from solar.backends.reread import Reread, find_rereads
from solar.backends.work import Work, node_work

__all__ = [
    "Analysis",
    "Assumptions",
    "Bound",
    "ComputeTime",
    "ContractionIO",
    "OpCost",
    "Reread",
    "Totals",
    "Traffic",
    "Work",
    "analyze",
    "analyze_graph",
    "cache_aware_traffic",
    "compute_time",
    "contraction_io",
    "find_rereads",
    "node_work",
]
