"""Time KernelBench-format files eagerly with a synchronised start (solar.validate.timing.time_cuda
with sync_start=True: the host issues nothing of a timed call before the GPU timestamps its start, so
the eager_host level's head start is 0, docs/BOUNDS.md §17), and the host's own wall time of one
call started on an idle GPU (no synchronisation inside: how long the host takes to issue it). One
JSON line per file, in the shape of kernelbench_eager.jsonl, with "protocol": "sync_start".
With --graphed, the same call is also captured once in a CUDA graph (warmed on a side stream, as
capture needs) and its replays timed by the same protocol: `measured.graphed` (a program that
cannot be captured gets `graphed_error` instead).

    python benchmarks/eager_host_measure.py FILE|FAMILY:SCENARIO... --out OUT.jsonl [--reps 20] [--budget-s 300] [--graphed]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.measure_files import build_on_gpu, file_name, write_rows  # noqa: E402
from benchmarks.rows import error_line, row_or_error  # noqa: E402


def graph_of(torch: Any, call: Callable[[], object]) -> Any:
    """`call` captured in a CUDA graph, after warm-up calls on a side stream; autograd off."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.no_grad():
        with torch.cuda.stream(stream):
            for _ in range(3):
                call()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            call()
    torch.cuda.synchronize()
    return graph


def time_graphed(torch: Any, call: Callable[[], object], l2_bytes: int, reps: int) -> dict:
    """Replays of `call`'s CUDA graph timed as the eager call is (sync_start, L2 flushed)."""
    from solar.validate.timing import time_cuda

    try:
        graph = graph_of(torch, call)
    except Exception as exc:  # capture refuses host syncs, data-dependent shapes, CPU tensors
        torch.cuda.synchronize()
        return {"graphed_error": error_line(exc)}
    t = time_cuda(graph.replay, l2_bytes, reps, sync_start=True)
    return {"graphed": {"median_seconds": t.median_seconds, "min_seconds": t.min_seconds, "reps": t.reps}}


def measure_one(path: Path, reps: int, graphed: bool = False) -> dict:
    import torch

    from solar.validate.device import query_device
    from solar.validate.run import to_device
    from solar.validate.timing import time_cuda

    def measure() -> dict:
        model, inputs = build_on_gpu(path)
        model = model.cuda()
        args = to_device(list(inputs), torch)
        t = time_cuda(lambda: model(*args), query_device().l2_bytes, reps, sync_start=True)
        host = float("inf")
        with torch.no_grad():
            for _ in range(5):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                model(*args)
                host = min(host, time.perf_counter() - t0)
                torch.cuda.synchronize()
        row: dict = {"measured": {"eager": {"median_seconds": t.median_seconds, "min_seconds": t.min_seconds,
                                            "reps": t.reps, "host_seconds": host}}}
        if graphed:
            extra = time_graphed(torch, lambda: model(*args), query_device().l2_bytes, reps)
            row["measured"].update({k: v for k, v in extra.items() if k == "graphed"})
            row.update({k: v for k, v in extra.items() if k != "graphed"})
        return row

    return row_or_error(measure)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--budget-s", type=float, default=300.0)
    p.add_argument("--graphed", action="store_true")
    args = p.parse_args(argv)
    write_rows(
        args.files, args.out, time.time() + args.budget_s, lambda path: measure_one(path, args.reps, args.graphed),
        lambda path, row: (path.name, {m: t["min_seconds"] for m, t in row.get("measured", {}).items()},
                           row.get("error", row.get("graphed_error", ""))),
        file_name(2), protocol="sync_start",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
