"""The levels built on the fused / cache-aware / unfused analysis: `recurrence` (critical path of
in-order loops, solar.backends.recurrence) and `eager_host` (eager execution behind the host's
dispatch, solar.backends.dispatch). Each is reported only where its inputs exist, with one
assumption line saying where its numbers come from, or why it is absent."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import Analysis
from solar.backends.dispatch import EagerCall, eager_host, floors_from_spec, floors_given
from solar.backends.recurrence import GRID_SYNC_MARGIN, find_chains, recurrence_bound
from solar.backends.work import graph_work
from solar.hardware import HardwareSpec
from solar.hardware.spec import calibrated_spec
from solar.lift.einsum import EinsumGraph


def with_levels(
    analysis: Analysis,
    graph: EinsumGraph,
    spec: HardwareSpec,
    assumptions: Assumptions,
    calls: Iterable[EagerCall] | None = None,
    dispatch_seconds: float | None = None,
    grid_sync_seconds: float | None = None,
    lead_seconds: float | None = None,
) -> Analysis:
    """`analysis` with the recurrence and eager_host levels added where they apply.

    calls: the program's ops as eager PyTorch runs them (None: not a traced PyTorch program).
    dispatch_seconds / grid_sync_seconds: floors given by the user instead of the calibrated spec's
    (hardware_specs/calibrated/NAME.yaml). lead_seconds: the host's head start (default: the
    calibrated timing lead with calibrated floors, 0 with a given floor)."""
    calibrated = calibrated_spec(spec.name)
    measured = calibrated.dispatch if calibrated is not None else None
    levels, notes = list(analysis.levels), list(analysis.notes)
    floors_by_instance: dict = {}
    rec = recurrence_level(analysis, graph, spec, assumptions, grid_sync_seconds)
    if rec is not None:
        levels.append(rec.bound)
        notes.append(rec.describe())
        floors_by_instance = rec.instance_floors
    if calls is None:
        notes.append("eager_host: not reported (not a traced PyTorch program)")
    elif dispatch_seconds is None and measured is None:
        notes.append(
            f"eager_host: not reported: no calibrated dispatch floors for {spec.name} "
            "(run `solar calibrate --dispatch-only` on that GPU's host, or pass --dispatch-us)"
        )
    else:
        floors = (
            floors_given(dispatch_seconds, lead_seconds or 0.0) if dispatch_seconds is not None
            else floors_from_spec(spec.name, measured, lead_seconds)
        )
        eh = eager_host(analysis, calls, floors, floors_by_instance)
        levels.append(eh.bound)
        notes.append(eh.describe())
    return replace(analysis, levels=tuple(levels), notes=tuple(notes))


def recurrence_level(
    analysis: Analysis,
    graph: EinsumGraph,
    spec: HardwareSpec,
    assumptions: Assumptions,
    grid_sync_seconds: float | None = None,
) -> Any:
    """The recurrence level of the program (solar.backends.recurrence), None without in-order loops."""
    if not find_chains(graph):
        return None
    calibrated = calibrated_spec(spec.name)
    measured = calibrated.dispatch if calibrated is not None else None
    if grid_sync_seconds is not None:
        sync, source = grid_sync_seconds, "given (--grid-sync-us)"
    elif measured is not None:
        sync = GRID_SYNC_MARGIN * measured.grid_sync_seconds
        source = f"half the fastest measured, calibrated {measured.date}"
    else:
        sync, source = 0.0, f"none: {spec.name} has no calibrated grid-sync floor, 0 assumed"
    return recurrence_bound(
        graph, graph_work(graph), spec, assumptions,
        analysis.cache_aware or analysis.fused, sync, source,
    )
