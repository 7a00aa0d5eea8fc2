"""Validate solar's bounds on the CUDA GPU at hand, in one run: calibrate, then every problem of the
suite (eager; torch.compile too for the fused chains of level 2) and every case of
benchmarks/validation_shapes.py. Results go to OUT as JSON lines (one object per problem), with
the environment; a time budget stops the run cleanly before the device call's limit.

    python benchmarks/h200_validation.py --out DIR [--budget-s 500] [--parts calibrate suite shapes]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _write(path: Path, obj: dict) -> None:
    with path.open("a") as f:
        f.write(json.dumps(obj) + "\n")


def run_suite(out: Path, deadline: float, reps: int) -> None:
    from benchmarks.suite_tools import list_problems
    from solar.validate.run import validate_file

    for path in list_problems(ROOT / "benchmarks/suite"):
        if "huge" in path.parts:
            continue
        if time.time() > deadline:
            _write(out, {"problem": str(path.relative_to(ROOT / "benchmarks/suite")), "skipped": "time budget"})
            continue
        rel = str(path.relative_to(ROOT / "benchmarks/suite"))
        compile_ = rel.startswith("level2/")
        try:
            result = validate_file(path, compile=compile_, reps=reps)
            obj = json.loads(result.to_json())
        except Exception as exc:
            obj = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
        obj["problem"] = rel
        _write(out, obj)
        print(rel, obj.get("measured", {}).get("eager", {}).get("median_seconds"), obj.get("bounds"), "VIOLATIONS" if obj.get("violations") else "", flush=True)


def run_shapes(out: Path, deadline: float, reps: int) -> None:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from benchmarks.validation_shapes import CASES
    from solar.api import load
    from solar.validate.run import validate_module

    for case in CASES:
        if time.time() > deadline:
            _write(out, {"problem": case.name, "skipped": "time budget"})
            continue
        old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        try:
            torch.backends.cuda.matmul.allow_tf32 = case.tf32
            if case.category == "conv" and case.dtype == "fp32":
                torch.backends.cudnn.allow_tf32 = True  # PyTorch's default, stated in the assumptions
            with FakeTensorMode(allow_non_fake_inputs=True):
                model, inputs = case.build()
                loaded = load(model, inputs)
            torch.manual_seed(0)
            with torch.device("cuda"):
                model, inputs = case.build()
            result = validate_module(model, inputs, case.name, reps=reps, loaded=loaded)
            obj = json.loads(result.to_json())
        except Exception as exc:
            obj = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old
        obj.update(problem=case.name, category=case.category, dtype=case.dtype)
        _write(out, obj)
        print(case.name, obj.get("measured", {}).get("eager", {}).get("median_seconds"), obj.get("bounds"), "VIOLATIONS" if obj.get("violations") else "", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=500)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--parts", nargs="+", default=["calibrate", "suite", "shapes"])
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + args.budget_s
    if "calibrate" in args.parts:
        from solar.validate.calibrate import calibrate

        measured = calibrate(out / "H200-SXM.calibrated.yaml")
        print(json.dumps(measured, indent=1), flush=True)
    if "shapes" in args.parts:
        run_shapes(out / "shapes.jsonl", deadline, args.reps)
    if "suite" in args.parts:
        run_suite(out / "suite.jsonl", deadline, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
