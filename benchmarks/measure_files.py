"""Time KernelBench-format files on the CUDA GPU at hand, without analysing them there (the bounds
are computed on any CPU from the committed rows: benchmarks/join_measured.py). Each file is built
on the GPU as `solar validate` builds it and timed the same way (solar.validate.run.measure: L2
flushed before every call, CUDA events, min and median), eagerly and, with --compile, under
torch.compile. One JSON line per file, in the shape `solar kernelbench --measured` reads.

    python benchmarks/measure_files.py FILE... --out OUT.jsonl [--compile] [--reps 30] [--budget-s 500]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def measure_one(path: Path, compile_: bool, reps: int) -> dict:
    import torch

    from solar.validate.run import build_on_gpu, measure

    try:
        model, inputs = build_on_gpu(path)
        measured, error = measure(model, inputs, compile_, reps)
        row: dict = {"measured": {m: t.model_dump() for m, t in measured.items()}}
        if error:
            row["error"] = error
        return row
    except Exception as exc:  # a model that does not fit or fails to build is a row
        text = str(exc).strip().splitlines()
        return {"error": f"{type(exc).__name__}: {text[0] if text else ''}"[:300]}
    finally:
        model = inputs = None  # noqa: F841
        gc.collect()
        torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    from solar.validate.device import environment

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--budget-s", type=float, default=500.0)
    args = p.parse_args(argv)
    deadline = time.time() + args.budget_s
    env = environment()
    with args.out.open("a") as f:
        for path in args.files:
            row: dict = {"problem": path.name, "arch": env["gpu"]}
            if time.time() > deadline:
                row["skipped"] = "time budget"
            else:
                row.update(measure_one(path, args.compile, args.reps))
            row["environment"] = env
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(path.name, {m: t["min_seconds"] for m, t in row.get("measured", {}).items()},
                  row.get("error", ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
