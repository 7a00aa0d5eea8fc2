"""Per-op measured times: run a program eagerly on the GPU under torch.profiler and attribute the
device time of every kernel to the top-level ATen op that launched it (the op eager PyTorch
dispatched from Python, as `solar.frontends.torch.eager` records them from the exported graph).

Each rep is timed as `solar validate` times a call: L2 flushed first (a write of twice its size),
then the model call inside a `record_function` range. A CPU event is a top-level op when it is an
`aten::` op whose nearest enclosing `aten::` op or rep range is the rep range; a kernel (or memcpy
/ memset) belongs to the op whose subtree holds the CPU event it is linked to (the profiler links
each device activity to the innermost op that launched it through its correlation id). Device time
that no op of a rep accounts for is recorded as unattributed, never dropped.

Needs only torch (no analysis runs on the GPU machine): the rows are joined to solar's op rows on
any CPU (solar.insight_ops)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from solar.validate.device import query_device
from solar.validate.run import build_on_gpu, to_device

REP = "solar_rep_"  # record_function label of one rep


def _on_cpu(event: Any) -> bool:
    return str(event.device_type).rsplit(".", 1)[-1] == "CPU"


def _rep_of(event: Any) -> tuple[int | None, bool]:
    """(rep index, is top-level): the rep range this CPU event sits in, and whether no aten op
    encloses it inside that range."""
    parent = event.cpu_parent
    top = True
    while parent is not None:
        if parent.name.startswith(REP):
            return int(parent.name[len(REP):]), top
        if parent.name.startswith("aten::"):
            top = False
        parent = parent.cpu_parent
    return None, top


def _subtree_kernels(event: Any) -> tuple[float, int]:
    """Device microseconds and count of the activities launched inside `event` (itself included)."""
    us, n = 0.0, 0
    stack = [event]
    while stack:
        e = stack.pop()
        us += sum(k.duration for k in e.kernels)
        n += len(e.kernels)
        stack.extend(e.cpu_children)
    return us, n


def attribute(events: Iterable[Any], reps: int) -> dict[str, Any]:
    """The per-op rows of profiled `events` (torch.autograd.profiler_util.FunctionEvent or alike:
    name, device_type, cpu_parent, cpu_children, kernels with durations in µs, time_range).

    Returns {"ops": [{index, op, kernels, kernel_seconds (min over reps), median_seconds}],
    "unattributed_kernel_seconds" (per rep), "total_kernel_seconds" (per rep, ops + unattributed),
    "reps", "note"}."""
    events = list(events)
    per_rep: list[list[tuple[float, str, float, int]]] = [[] for _ in range(reps)]
    attached_us = 0.0  # device time linked to any CPU event (inside or outside the reps)
    device_us = 0.0
    for e in events:
        if not _on_cpu(e):
            if not (getattr(e, "is_user_annotation", False) or e.name.startswith(REP)):
                device_us += e.time_range.end - e.time_range.start
            continue
        attached_us += sum(k.duration for k in e.kernels)
        if not e.name.startswith("aten::"):
            continue
        rep, top = _rep_of(e)
        if rep is None or not top or rep >= reps:
            continue
        us, n = _subtree_kernels(e)
        per_rep[rep].append((e.time_range.start, e.name, us, n))
    seqs = [[(name, us, n) for _, name, us, n in sorted(r)] for r in per_rep]
    names = [[name for name, _, _ in s] for s in seqs]
    note = ""
    same = [s for s in seqs if [x[0] for x in s] == names[0]]
    if len(same) < len(seqs):
        note = f"op sequence differs between reps: {len(same)} of {len(seqs)} reps agree with the first; those used"
    ops = []
    for i, (name, _, n) in enumerate(same[0] if same else []):
        times = [s[i][1] * 1e-6 for s in same]
        ops.append({
            "index": i, "op": name, "kernels": n,
            "kernel_seconds": min(times), "median_seconds": statistics.median(times),
        })
    in_reps = sum(us for s in seqs for _, us, _ in s)
    outside = attached_us - in_reps  # e.g. the L2 flush between reps
    unattributed = max(0.0, device_us - attached_us) * 1e-6 / max(reps, 1)
    totals = [sum(us for _, us, _ in s) * 1e-6 for s in same]
    return {
        "reps": len(same),
        "ops": ops,
        "unattributed_kernel_seconds": unattributed,
        "total_kernel_seconds": (min(totals) if totals else 0.0) + unattributed,
        "outside_kernel_seconds": outside * 1e-6,
        "note": note,
    }


def profile_ops(
    model: Any, inputs: Sequence[Any], l2_bytes: int, reps: int = 5, warmup: int = 3, device: str = "cuda"
) -> dict[str, Any]:
    """Profile `reps` eager calls of `model(*inputs)` (on `device` already), each after an L2
    flush. device="cpu" records the op sequence only (no kernels): how the tests check the keys."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    cuda = device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    flush = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device=device)
    activities = [ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda else [])]
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        sync()
        with profile(activities=activities) as prof:
            for k in range(reps):
                flush.fill_(k & 0xFF)
                sync()
                with record_function(f"{REP}{k}"):
                    model(*inputs)
                sync()
    return attribute(prof.events(), reps)


def profile_file(path: str, reps: int = 5) -> dict[str, Any]:
    """Build a KernelBench-format file on the GPU (as `solar validate` does) and profile it."""

    model, inputs = build_on_gpu(path)
    model = model.cuda()
    import torch

    return profile_ops(model, to_device(list(inputs), torch), query_device().l2_bytes, reps)
