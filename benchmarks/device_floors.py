"""The shortest kernel spans a GPU shows, measured from the device's own kernel timestamps
(torch.profiler's CUDA activity records, CUPTI): an empty kernel and a one-element kernel each
alone on an idle GPU, the same back to back in one stream (the interval from one start to the
next), queued by the host behind a long kernel (with and without the profiler), and replayed from a CUDA graph (per kernel). Also what CUDA events around one such call
read, the time the validator's own protocol would report for the smallest possible program. One
JSON file with the environment; every figure the least of its samples, with the median beside it.

    python benchmarks/device_floors.py --out FLOORS.json [--samples 200] [--chain 1000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def kernel_spans(torch: Any, fn: Callable[[], object], calls: int, sync_each: bool) -> list[tuple[float, float]]:
    """(start, end) in seconds of every kernel the device ran during `calls` calls of `fn` (with a
    synchronisation after each where `sync_each`), read from the profiler's CUDA activity trace."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
            if sync_each:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.loads(Path(f.name).read_text())
    events = [e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel" and "dur" in e]
    return sorted((e["ts"] * 1e-6, (e["ts"] + e["dur"]) * 1e-6) for e in events)


def stats(values: list[float]) -> dict[str, float | int]:
    return {"min_seconds": min(values), "median_seconds": statistics.median(values), "n": len(values)}


def alone(torch: Any, fn: Callable[[], object], samples: int) -> dict:
    """Durations of single kernels, each launched on an idle GPU."""
    spans = kernel_spans(torch, fn, samples, sync_each=True)
    return stats([e - s for s, e in spans])


def span_stats(rounds: list[list[tuple[float, float]]]) -> dict:
    """Over rounds of queued kernels' (start, end) spans: each kernel's duration, the start-to-start
    interval of neighbours, and a round's first start to last end divided by its kernel count."""
    durations = [e - s for spans in rounds for s, e in spans]
    intervals = [b[0] - a[0] for spans in rounds for a, b in itertools.pairwise(spans)]
    per_kernel = [(spans[-1][1] - spans[0][0]) / len(spans) for spans in rounds if spans]
    return {"duration": stats(durations), "start_to_start": stats(intervals), "span_per_kernel": stats(per_kernel)}


def chained(torch: Any, fn: Callable[[], object], chain: int, rounds: int = 5) -> dict:
    """Kernels queued back to back: each kernel's duration, the start-to-start interval and the
    whole span from the first start to the last end divided by the kernel count."""
    return span_stats([kernel_spans(torch, lambda: [fn() for _ in range(chain)], 1, sync_each=False)
                       for _ in range(rounds)])


SPIN_CYCLES = 100_000_000  # the long kernel the queued calls wait behind: ~50 ms at the H100's clock


def queued(torch: Any, fn: Callable[[], object], chain: int, rounds: int = 5) -> dict:
    """Kernels an eager host queued behind a long one (a spin of ~50 ms, long enough for the host to
    issue all `chain` calls before the device reaches them): the same statistics as `chained`, of the
    queued kernels only — how close eager launches can follow one another when the host is ahead."""
    def body() -> None:
        torch.cuda._sleep(SPIN_CYCLES)
        for _ in range(chain):
            fn()

    return span_stats([kernel_spans(torch, body, 1, sync_each=False)[1:] for _ in range(rounds)])


def queued_events(torch: Any, fn: Callable[[], object], chain: int, rounds: int = 10) -> dict:
    """The `queued` interval without a profiler: CUDA events recorded after the spin and after the
    `chain` queued kernels, (end - start) / chain per round (CUPTI off, so its per-launch
    bookkeeping cannot lengthen the interval)."""
    per_kernel = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        torch.cuda._sleep(SPIN_CYCLES)
        start.record()
        for _ in range(chain):
            fn()
        end.record()
        torch.cuda.synchronize()
        per_kernel.append(start.elapsed_time(end) * 1e-3 / chain)
    return stats(per_kernel)


def graphed(torch: Any, body: Callable[[], object], kernels: int, rounds: int = 5) -> dict:
    """`kernels` calls of `body` captured in one CUDA graph and replayed: kernel durations,
    start-to-start intervals and span per kernel from the profiler, and replay time per kernel
    from CUDA events."""
    from solar.validate.timing import event_seconds

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        body()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(kernels):
            body()
    rounds_spans = [kernel_spans(torch, graph.replay, 1, sync_each=True) for _ in range(rounds)]
    events = [t / kernels for t in event_seconds(graph.replay, 20)]
    return {"kernels_seen": len(rounds_spans[-1]), **span_stats(rounds_spans), "events_per_kernel": stats(events)}


def events_alone(torch: Any, fn: Callable[[], object], samples: int) -> dict:
    """CUDA-event time of one call on an idle GPU (the validator's clock on the smallest program)."""
    from solar.validate.timing import event_seconds

    return stats(event_seconds(fn, samples))


def measure(samples: int, chain: int) -> dict:
    import torch

    from solar.validate.device import environment
    from solar.validate.dispatch import host_cpu

    x = torch.zeros(1, device="cuda")
    kernels: dict[str, Callable[[], object]] = {
        "empty": lambda: torch.cuda._sleep(0),  # a spin kernel told to spin for 0 cycles
        "one_element_add": lambda: x.add_(1),
    }
    out: dict[str, Any] = {"environment": {**environment(), "host_cpu": host_cpu(), "hostname": platform.node()}}
    for name, fn in kernels.items():
        out[name] = {
            "alone": alone(torch, fn, samples),
            "back_to_back": chained(torch, fn, chain),
            "queued": queued(torch, fn, chain),
            "queued_events": queued_events(torch, fn, chain),
            "graph": graphed(torch, fn, chain),
            "events_alone": events_alone(torch, fn, samples),
        }
        print(name, json.dumps(out[name]["alone"]), flush=True)
    out["method"] = (
        "kernel start/end timestamps from torch.profiler CUDA activity (CUPTI); alone: one call then "
        f"cudaDeviceSynchronize, {samples} samples; back_to_back: {chain} calls queued in one stream, 5 rounds; "
        f"queued: {chain} calls queued behind a ~50 ms spin kernel, 5 rounds (queued_events: the same timed by CUDA "
        f"events from the spin's end to the last kernel's, no profiler, 10 rounds); graph: {chain} calls captured in one CUDA graph, 5 replays; events_alone: CUDA events around one call "
        f"on an idle GPU, {samples} samples (benchmarks/device_floors.py)"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--samples", type=int, default=200)
    p.add_argument("--chain", type=int, default=1000)
    args = p.parse_args(argv)
    args.out.write_text(json.dumps(measure(args.samples, args.chain), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
