"""Formula against numeric analysis: evaluate a SymbolicAnalysis at a size point and compare with
the numeric backend's analysis of the program traced at that point (FLOPs and bytes exactly,
seconds to float rounding)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import analyze_graph
from solar.hardware import HardwareSpec
from solar.ir.nodes import Program
from solar.lift.einsum import lift
from solar.symbolic.bounds import EXACT, SymbolicAnalysis

REL = 1e-9  # seconds and the bytes with Max(0, x - capacity) terms: the formulas' float coefficients are rounded once more than the backend's


def numeric(program: Program, spec: HardwareSpec, a: Assumptions) -> dict[str, float]:
    """The numeric quantities the formulas stand for."""
    an = analyze_graph(lift(program), spec, a)
    return {
        "flops": an.totals.flops,
        "contraction_flops": an.totals.contraction_flops,
        "dram_bytes": an.totals.dram_bytes,
        "cache_aware_dram_bytes": an.totals.cache_aware_dram_bytes,
        "unfused_dram_bytes": an.totals.unfused_dram_bytes,
        "compute_seconds": an.fused.compute_seconds,
        "memory_seconds": an.fused.memory_seconds,
        "launch_seconds": an.fused.launch_seconds,
        "fused_seconds": an.fused.seconds,
        "cache_aware_seconds": an.cache_aware.seconds,
        "unfused_seconds": an.unfused.seconds,
    }


def mismatches(
    sa: SymbolicAnalysis,
    point: Mapping[str, int],
    program: Program,
    spec: HardwareSpec,
    a: Assumptions = Assumptions(),
) -> list[str]:
    """Every quantity whose formula at `point` differs from the numeric analysis of `program`."""
    got = sa.evaluate(point)
    want = numeric(program, spec, a)
    bad = []
    for name, w in want.items():
        g = got[name]
        ok = g == w if name in EXACT else math.isclose(g, w, rel_tol=REL, abs_tol=1e-300)
        if not ok:
            bad.append(f"{name} at {dict(point)}: formula {g!r}, numeric {w!r}")
    return bad
