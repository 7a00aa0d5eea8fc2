"""Time every workload of a `solar definitions` run on this machine's CUDA GPU and write measured times
for `--measured`: the baseline T_b is the definition's reference run eagerly, the kernel T_k is
torch.compile of the same reference (a stand-in for a submitted kernel), both timed by solar validate's
one timing loop (L2 flushed before every call, CUDA events, median of the repetitions).

    solar definitions benchmarks/definitions --arch H200-SXM --out defs/
    python benchmarks/definitions_validate.py defs/ > defs/measured.jsonl      # on the GPU machine
    solar definitions benchmarks/definitions --arch H200-SXM --out defs/ --measured defs/measured.jsonl

Each record also keeps the validate result's bounds and environment (GPU, driver, torch, clocks)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(out: Path) -> int:
    from solar.validate.run import validate_file

    seen = set()
    for line in (out / "bounds.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["status"] != "ok" or row["problem"] in seen:
            continue
        seen.add(row["problem"])
        record = {"definition": row["definition"], "workload": row["workload"]}
        try:
            result = validate_file(out / "problems" / row["problem"], compile=True)
        except Exception as exc:  # noqa: BLE001 - one workload's failure is recorded, not fatal
            print(json.dumps({**record, "error": " ".join(str(exc).split())[:300]}), flush=True)
            continue
        times = result.measured
        print(json.dumps({
            **record,
            "arch": result.arch,
            "kernel_seconds": times["compile"].median_seconds if "compile" in times else None,
            "baseline_seconds": times["eager"].median_seconds,
            "kernel": "torch.compile of the reference",
            "baseline": "the reference, eager PyTorch",
            "min_seconds": {k: v.min_seconds for k, v in times.items()},
            "bounds": result.bounds,
            "environment": result.environment,
            "date": result.date,
        }), flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(Path(sys.argv[1])))
