"""Time the soundness sweep's cases on the CUDA GPU at hand. Needs only torch there: the
bounds are computed on any CPU from the committed measurements (benchmarks/soundness/report.py and
tests/test_soundness_oracle.py), so the GPU side never depends on solar's analysis stack.

Each case is timed as `solar validate` times (solar.validate.timing: L2 flushed by a write of 2x its
size before every timed call, CUDA events, min and median of REPS); SDPA cases once per backend
forced with `torch.nn.attention.sdpa_kernel`, plus `torch.compile` where the case asks for it.
One JSON line per (case, mode, backend) goes to OUT/soundness.jsonl, with the environment.

    python benchmarks/soundness/sweep.py --out DIR [--reps 30] [--budget-s 540] [--only PREFIX ...] [--modes eager compile]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from benchmarks.rows import error_line  # noqa: E402
from benchmarks.soundness.cases import CASES, SDPA_BACKENDS, Case, restore_tf32, tf32_flags  # noqa: E402
from solar.validate.device import environment  # noqa: E402
from solar.validate.timing import time_cuda  # noqa: E402


def _backend(name: str):
    from torch.nn.attention import SDPBackend

    return {
        "math": SDPBackend.MATH,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "flash": SDPBackend.FLASH_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
    }[name]


def _runs(case: Case) -> list[tuple[str, str | None]]:
    """(mode, backend) pairs to time: eager per SDPA backend; compile with the default choice."""
    out: list[tuple[str, str | None]] = []
    for mode in case.modes:
        backends = SDPA_BACKENDS if case.sdpa and mode == "eager" else (None,)
        out.extend((mode, b) for b in backends)
    return out


def time_case(case: Case, mode: str, backend: str | None, l2_bytes: int, reps: int) -> dict:
    from contextlib import nullcontext

    from torch.nn.attention import sdpa_kernel

    old = tf32_flags(case.tf32)
    try:
        torch.manual_seed(0)
        with torch.device("cuda"):
            model, inputs = case.build()
        fn = torch.compile(model) if mode == "compile" else model
        ctx = sdpa_kernel([_backend(backend)]) if backend else nullcontext()
        with ctx, torch.no_grad():
            t = time_cuda(lambda: fn(*inputs), l2_bytes, reps, warmup=3 if mode == "compile" else 5)
        return {"min_seconds": t.min_seconds, "median_seconds": t.median_seconds, "reps": t.reps}
    except Exception as exc:  # an unsupported backend/dtype/mask combination is a row, not a stop
        return {"error": error_line(exc)}
    finally:
        restore_tf32(old)
        model = inputs = fn = None  # noqa: F841
        gc.collect()
        torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--budget-s", type=float, default=540.0)
    p.add_argument("--only", nargs="*", default=None, help="case-name prefixes to run")
    p.add_argument("--modes", nargs="*", default=("eager", "compile"), help="modes to time")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "soundness.jsonl"
    deadline = time.time() + args.budget_s
    env = environment()
    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    cases = [c for c in CASES if not args.only or any(c.name.startswith(o) for o in args.only)]
    with path.open("a") as f:
        for case in cases:
            for mode, backend in _runs(case):
                if mode not in args.modes:
                    continue
                row = {"case": case.name, "mode": mode, "backend": backend}
                if time.time() > deadline:
                    row["skipped"] = "time budget"
                else:
                    row.update(time_case(case, mode, backend, l2, args.reps))
                row["environment"] = env
                f.write(json.dumps(row) + "\n")
                f.flush()
                shown = row.get("min_seconds", row.get("error", row.get("skipped")))
                print(case.name, mode, backend or "", shown, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
