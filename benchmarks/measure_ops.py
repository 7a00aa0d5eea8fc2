"""Per-op measured times of KernelBench-format files on the CUDA GPU at hand (solar.validate.per_op:
eager run under torch.profiler, each kernel's device time attributed to the top-level ATen op that
launched it, unattributed device time recorded), plus the whole call timed as `solar validate`
times it. One JSON line per file, joined to solar's op rows on any CPU by
`solar analyze FILE --measured-ops ROWS.jsonl` (solar.report.measured_ops, solar.api.join_measured_ops).

    python benchmarks/measure_ops.py FILE... --out OUT.jsonl [--reps 5] [--budget-s 300] [--name-depth 2]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.measure_files import file_name, measure_one, write_rows  # noqa: E402


def profile(model: Any, inputs: list, reps: int) -> dict:
    import torch

    from solar.validate.device import query_device
    from solar.validate.per_op import profile_ops
    from solar.validate.run import _to_device

    return profile_ops(model.cuda(), _to_device(list(inputs), torch), query_device().l2_bytes, reps)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--budget-s", type=float, default=300.0)
    p.add_argument("--name-depth", type=int, choices=(1, 2), default=1)
    args = p.parse_args(argv)
    then = functools.partial(profile, reps=args.reps)
    name = file_name(args.name_depth)
    write_rows(
        args.files, args.out, time.time() + args.budget_s, lambda path: measure_one(path, False, 20, then),
        lambda path, row: (name(path), len(row.get("ops", [])), "ops", f"{row.get('total_kernel_seconds', 0) * 1e6:.1f} us",
                           row.get("note", ""), row.get("error", "")),
        name,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
