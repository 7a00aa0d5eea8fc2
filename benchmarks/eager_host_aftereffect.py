"""Which step of the gap profile slows a process's later dispatch: per KernelBench-format file, the
host wall time of one eager call (least of `--reps`, each started on an idle device) in a fresh
process, measured before and after one disturbance, each disturbance in its own process:

    none      nothing in between (the run-to-run spread of the same process)
    swap      `nn.Module.__call__` replaced by a direct `forward` call for some calls, then restored
              (benchmarks/eager_host_gap.py's module_calls)
    profile   a torch.profiler session of a few calls (CPU and CUDA activities)
    tracer    a torch.profiler session with the Python tracer (with_stack)

One JSON line per file: {"problem", "arch", "host_us": {kind: [before, after] or the error's last
line}, "environment"} ("error" instead of "host_us" entries for a file that is not there).

    python benchmarks/eager_host_aftereffect.py FILE... --out OUT.jsonl [--reps 20] [--budget-s 120] [--kinds KIND...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.eager_host_gap import build, environment, least_host_us, module_calls, profiled  # noqa: E402
from benchmarks.measure_files import file_name  # noqa: E402
from benchmarks.rows import in_fresh_process  # noqa: E402

KINDS = ("none", "swap", "profile", "tracer")


def host_us(torch: Any, call: Any, device: str, reps: int) -> float:
    """The least host wall time of one call started on an idle device, autograd off (µs)."""
    with torch.no_grad():
        return round(least_host_us(torch, device, call, reps), 3)


DISTURB = {
    "none": lambda torch, call, device: None,
    "swap": lambda torch, call, device: module_calls(torch, call, device, 10),
    "profile": lambda torch, call, device: profiled(torch, call, device, 3, stack=False),
    "tracer": lambda torch, call, device: profiled(torch, call, device, 1, stack=True),
}


def one(path: Path, kind: str, reps: int) -> list[float]:
    """[before, after] for one disturbance, in this process."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, inputs = build(path, device)
    call = lambda: model(*inputs)  # noqa: E731
    host_us(torch, call, device, reps)  # warm-up
    before = host_us(torch, call, device, reps)
    DISTURB[kind](torch, call, device)
    return [before, host_us(torch, call, device, reps)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--budget-s", type=float, default=120.0, help="stop starting files after this many seconds")
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="disturbances to measure (default: all)")
    p.add_argument("--one", choices=KINDS, default=None, help=argparse.SUPPRESS)  # one file, one kind, here
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.files[0], args.one, args.reps)), flush=True)
        return 0
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    env = environment(device)
    end, name = time.time() + args.budget_s, file_name(2)
    with args.out.open("a") as out:
        for path in args.files:
            if time.time() > end:
                break
            row: dict = {"problem": name(path), "arch": env["gpu"], "host_us": {}}
            if not path.is_file():
                row["error"] = f"{path}: no such file"
            for kind in args.kinds if path.is_file() else ():
                row["host_us"][kind] = in_fresh_process(__file__, [str(path), "--out", "-", "--reps", str(args.reps),
                                                                   "--one", kind])
            out.write(json.dumps({**row, "environment": env}) + "\n")
            out.flush()
            print(path.name, row.get("error", row["host_us"]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
