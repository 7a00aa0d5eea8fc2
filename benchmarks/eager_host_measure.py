"""Time KernelBench-format files eagerly with a synchronised start (solar.validate.timing.time_cuda
with sync_start=True: the host issues nothing of a timed call before the GPU timestamps its start, so
the eager_host level's head start is 0, docs/BOUNDS.md §17), and the host's own wall time of one
call started on an idle GPU (no synchronisation inside: how long the host takes to issue it). One
JSON line per file, in the shape of kernelbench_eager.jsonl, with "protocol": "sync_start".

    python benchmarks/eager_host_measure.py FILE... --out OUT.jsonl [--reps 20] [--budget-s 300]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.measure_files import file_name, write_rows  # noqa: E402
from benchmarks.rows import error_line  # noqa: E402


def measure_one(path: Path, reps: int) -> dict:
    import torch

    from solar.validate.device import query_device
    from solar.validate.run import _to_device, build_on_gpu
    from solar.validate.timing import time_cuda

    try:
        model, inputs = build_on_gpu(path)
        model = model.cuda()
        args = _to_device(list(inputs), torch)
        t = time_cuda(lambda: model(*args), query_device().l2_bytes, reps, sync_start=True)
        host = float("inf")
        with torch.no_grad():
            for _ in range(5):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                model(*args)
                host = min(host, time.perf_counter() - t0)
                torch.cuda.synchronize()
        return {"measured": {"eager": {"median_seconds": t.median_seconds, "min_seconds": t.min_seconds,
                                       "reps": t.reps, "host_seconds": host}}}
    except Exception as exc:  # a model that does not fit or fails to build is a row
        return {"error": error_line(exc)}
    finally:
        model = inputs = args = None  # noqa: F841
        gc.collect()
        torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--budget-s", type=float, default=300.0)
    args = p.parse_args(argv)
    write_rows(
        args.files, args.out, time.time() + args.budget_s, lambda path: measure_one(path, args.reps),
        lambda path, row: (path.name, row.get("measured", {}).get("eager", {}), row.get("error", "")),
        file_name(2), protocol="sync_start",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
