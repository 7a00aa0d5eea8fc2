"""Timing on a CUDA GPU: warm-up, then every timed call preceded by a write of twice the L2 size
(so no input is served from L2: the bounds assume a cold cache), CUDA events around the call only.

`sync_start=True` (an option; the default protocol, behind every committed measurement, is
unchanged) waits for the flush and for the start event before calling: the host then issues no op
of the timed call before the GPU timestamps its start, so the host's head start is 0
(docs/BOUNDS.md §17)."""

from __future__ import annotations

import contextlib
import statistics
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Timing:
    median_seconds: float
    min_seconds: float
    reps: int


def summarise(samples_seconds: list[float]) -> Timing:
    if not samples_seconds:
        raise ValueError("no samples")
    return Timing(statistics.median(samples_seconds), min(samples_seconds), len(samples_seconds))


def time_cuda(
    fn: Callable[[], object],
    l2_bytes: int,
    reps: int = 50,
    warmup: int = 5,
    before: Callable[[], object] | None = None,
    no_grad: bool = True,
    sync_start: bool = False,
) -> Timing:
    """Median and min of `reps` timed calls of `fn`, each after flushing L2 (and after `before`,
    e.g. zeroing gradients, which runs outside the timed region); autograd off unless `no_grad` is
    False (a training step). With `sync_start` every call starts on an idle GPU after its start
    event has been timestamped (head start 0) instead of while the flush still runs."""
    import torch

    flush = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device="cuda")
    with torch.no_grad() if no_grad else contextlib.nullcontext():
        for _ in range(warmup):
            if before is not None:
                before()
            fn()
        torch.cuda.synchronize()
        pairs = []
        for k in range(reps):
            if before is not None:
                before()
            flush.fill_(k & 0xFF)  # writes 2x L2: evicts everything a previous call left there
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if sync_start:
                torch.cuda.synchronize()  # the flush is done: the GPU idles
            start.record()
            if sync_start:
                start.synchronize()  # the start is timestamped before the host issues the call's first op
            fn()
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize()
    return summarise([s.elapsed_time(e) / 1e3 for s, e in pairs])


def event_seconds(fn: Callable[[], object], reps: int, warmup: int = 3) -> list[float]:
    """Seconds of `reps` calls of `fn` between CUDA events, each alone on an idle GPU (no L2
    flush: for calibration kernels whose data is meant to stay where it is), after `warmup` calls."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return times
