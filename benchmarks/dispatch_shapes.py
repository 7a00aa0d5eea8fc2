"""What an op's host time depends on: the argument-class sweep (solar.validate.argsweep: the hot-loop
host time of one call of conv2d, batch_norm, cat, linear, relu and add_ across sizes, dtypes, argument
variants and cuDNN settings, each with its argument class) on one machine start, with the device time
per call beside it (CUDA events over the same loop), so a case whose device time exceeds its host time
is marked. The committed files are the raw input of the host profiles' class floors
(benchmarks/host_profiles.py). One JSON line per case:

    {"op", "case", "features", "empty_us", "host_us", "device_us", "environment"}

("error" for a case the backend refuses; features: the call's argument class,
solar.frontends.argclass; empty_us: an empty call's host time, which host_us includes)

    python benchmarks/dispatch_shapes.py --out OUT.jsonl [--device cuda|cpu]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.eager_host_gap import environment  # noqa: E402


def device_us(torch: Any, fn: Callable[[], object], calls: int = 32) -> float:
    """Device time per call over `calls` back-to-back calls (CUDA events), µs."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / calls


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda when available")
    p.add_argument("--only", nargs="*", default=None, help="ops to measure (default: all)")
    args = p.parse_args(argv)
    import torch

    from solar.validate.argsweep import sweep

    dev = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    env = environment(dev)
    extra = (lambda fn: {"device_us": round(device_us(torch, fn), 3)}) if dev == "cuda" else (lambda fn: {"device_us": None})
    with args.out.open("a") as out:
        def write(row: dict) -> None:
            out.write(json.dumps({**row, "environment": env}) + "\n")
            out.flush()
            print(row["op"], row["case"], row.get("error") or (row["host_us"], row["device_us"]), flush=True)

        sweep(torch, dev, args.only, extra=extra, on_row=write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
