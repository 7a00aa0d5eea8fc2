"""The levels built on the fused / cache-aware / unfused analysis: `recurrence` (critical path of
in-order loops, solar.backends.recurrence), `eager_host` (eager execution behind the host's
dispatch, solar.backends.dispatch) and `graphed` (the eager kernels replayed from a CUDA graph,
solar.backends.graphed). Each is reported where its inputs exist, with one assumption line saying
where its numbers come from, or why it is absent."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import Analysis
from solar.backends.dispatch import EagerCall, EagerHost, eager_host, floors_from_host, floors_given
from solar.backends.graphed import GRAPH_MARGIN, Graphed, graphed_bound
from solar.backends.recurrence import GRID_SYNC_MARGIN, find_chains, recurrence_bound
from solar.backends.work import graph_work
from solar.hardware import HardwareSpec
from solar.hardware.host import HostProfile, get_host
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
    host: HostProfile | None = None,
) -> Analysis:
    """`analysis` with the recurrence, eager_host and graphed levels added where they apply.

    calls: the program's ops as eager PyTorch runs them (None: not a traced PyTorch program).
    host: the host profile whose dispatch floors bound eager_host (None: the default profile,
    below every calibrated host's); dispatch_seconds: one floor given by the user instead.
    grid_sync_seconds: instead of the calibrated spec's. lead_seconds: the host's head start
    (default: the profile's timing lead, 0 with a given floor)."""
    levels, notes = list(analysis.levels), list(analysis.notes)
    floors_by_instance: dict = {}
    rec = recurrence_level(analysis, graph, spec, assumptions, grid_sync_seconds)
    if rec is not None:
        levels.append(rec.bound)
        notes.append(rec.describe())
        floors_by_instance = rec.instance_floors
    gr = graphed_level(analysis, spec)
    if calls is None:
        notes.append("eager_host: not reported (not a traced PyTorch program)")
    else:
        floors = (
            floors_given(dispatch_seconds, lead_seconds or 0.0) if dispatch_seconds is not None
            else floors_from_host(host or get_host(None), lead_seconds)
        )
        eh = eager_host(analysis, calls, floors, floors_by_instance)
        levels.append(eh.bound)
        notes.append(eh.describe() + explain_dispatch(eh, analysis.fused.seconds, gr))
    if gr is not None:
        levels.append(gr.bound)
        notes.append(gr.describe())
    return replace(analysis, levels=tuple(levels), notes=tuple(notes))


def graphed_level(analysis: Analysis, spec: HardwareSpec) -> Graphed | None:
    """The graphed level (solar.backends.graphed) with the GPU model's measured in-graph kernel
    interval, or the kernels' own floors alone where none is measured; None without kernels."""
    calibrated = calibrated_spec(spec.name)
    measured = calibrated.device_floors if calibrated is not None else None
    if measured is None:
        return graphed_bound(analysis, 0.0, f"no in-graph kernel interval measured for {spec.name}")
    g = measured.cuda_graph_kernel_seconds
    return graphed_bound(
        analysis, GRAPH_MARGIN * g.value,
        f"{GRAPH_MARGIN:g} x the least in-graph kernel interval measured on {spec.name}, {g.value * 1e6:.3f} us",
    )


def explain_dispatch(eh: EagerHost, fused_seconds: float, graphed: Graphed | None) -> str:
    """For a dispatch-bound program: the ops dispatched, the host floors' share and what would
    lower the bound (fusion, CUDA graphs, a larger batch), with numbers; "" otherwise."""
    seconds = eh.bound.seconds
    if eh.bound.bottleneck != "dispatch" or seconds <= 0:
        return ""
    us = lambda t: f"{t * 1e6:.1f} us"
    graph = f"; CUDA graphs (no host dispatch): graphed {us(graphed.bound.seconds)}" if graphed is not None else ""
    grow = (eh.dispatch_seconds - eh.lead_seconds) / eh.device_seconds if eh.device_seconds > 0 else float("inf")
    batch = (
        f"; a larger batch dispatches the same {eh.ops} ops: the device floors ({us(eh.device_seconds)}) may grow "
        f"{grow:.1f}x before they, not the host, bind" if grow != float("inf") else ""
    )
    lead = f" less the {us(eh.lead_seconds)} head start" if eh.lead_seconds else ""
    share = (eh.dispatch_seconds - eh.lead_seconds) / seconds
    return (
        f". Dispatch binds: {eh.ops} ops dispatched, host floors {us(eh.dispatch_seconds)}{lead} = "
        f"{share:.0%} of the {us(seconds)} bound. What would lower it: fusion into one "
        f"kernel: fused {us(fused_seconds)}{graph}{batch}"
    )


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
    measured = calibrated.device_floors if calibrated is not None else None
    if grid_sync_seconds is not None:
        sync, source = grid_sync_seconds, "given (--grid-sync-us)"
    elif measured is not None:
        sync = GRID_SYNC_MARGIN * measured.grid_sync_seconds.value
        source = "half the fastest measured (hardware_specs/calibrated device_floors)"
    else:
        sync, source = 0.0, f"none: {spec.name} has no calibrated grid-sync floor, 0 assumed"
    return recurrence_bound(
        graph, graph_work(graph), spec, assumptions,
        analysis.cache_aware or analysis.fused, sync, source,
    )
