"""Join per-op measured rows (benchmarks/measure_ops.py, on the GPU) to solar's per-op bounds in
context (solar.api.join_measured_ops), on any CPU, and record the bounds: one JSON line per problem with every
joined op's index, ATen op, bound and measured time, the unmatched counts and the violations. The
KernelBench sources are not committed, so tests/usecases/test_per_op_oracle.py reads these rows.

    PYTHONPATH=. python benchmarks/per_op_join.py benchmarks/results/h200/per_op.jsonl \
        --kb .kb --out benchmarks/results/h200/per_op_bounds.jsonl [--arch H200-SXM]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def source_of(problem: str, kb: Path) -> Path:
    """level2/1_X.py -> KB/level2/1_X.py; models/NAME.py -> benchmarks/models/NAME.py."""
    if problem.startswith("models/"):
        return ROOT / "benchmarks" / problem
    return kb / problem


def main(argv: list[str] | None = None) -> int:
    from solar.api import load
    from solar.errors import SolarError
    from solar.api import join_measured_ops

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", type=Path)
    p.add_argument("--kb", type=Path, default=ROOT / ".kb")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--arch", default="H200-SXM")
    args = p.parse_args(argv)
    out = []
    from benchmarks.rows import read_rows

    for row in read_rows(args.rows):
        rec: dict = {"problem": row["problem"], "arch": args.arch}
        if "ops" not in row:
            rec["error"] = f"not measured: {row.get('error') or row.get('skipped')}"
            out.append(rec)
            print(row["problem"], rec["error"])
            continue
        t0 = time.perf_counter()
        try:
            mo = join_measured_ops(load(str(source_of(row["problem"], args.kb))), args.arch, row)
        except SolarError as exc:
            rec["error"] = str(exc).splitlines()[0][:300]
            out.append(rec)
            print(row["problem"], rec["error"])
            continue
        ratios = [o.bound_seconds / o.measured_seconds for o in mo.ops if o.measured_seconds > 0]
        rec.update(
            matched=mo.matched, unmatched_measured=mo.unmatched_measured, unmatched_calls=mo.unmatched_calls,
            measured_seconds=mo.measured_seconds, unattributed_seconds=mo.unattributed_seconds,
            unattributed_bound_seconds=mo.unattributed_bound_seconds, violations=mo.violations,
            ops=sorted(
                ({"index": o.index, "profiled_index": o.profiled_index, "op": o.op, "bound_seconds": o.bound_seconds, "measured_seconds": o.measured_seconds,
                  "kernels": o.kernels} for o in mo.ops),
                key=lambda o: o["index"],
            ),
        )
        out.append(rec)
        top = mo.ops[0] if mo.ops else None
        print(
            f"{row['problem']}: {mo.matched} joined ({mo.unmatched_measured} profiled, {mo.unmatched_calls} traced "
            f"unmatched), {len(mo.violations)} violations, median bound/measured "
            f"{statistics.median(ratios) if ratios else float('nan'):.3f}; most lost: "
            f"{top.op + f' #{top.index} {top.lost_seconds * 1e6:.1f} us' if top else '-'} ({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
    args.out.write_text("".join(json.dumps(r) + "\n" for r in out))
    bad = sum(len(r.get("violations", [])) for r in out)
    print(f"{len(out)} problems, {sum(r.get('matched', 0) for r in out)} ops joined, {bad} violations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
