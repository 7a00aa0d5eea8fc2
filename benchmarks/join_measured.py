"""Join GPU timings of KernelBench-format files (benchmarks/measure_files.py output) with solar's
bounds for the same files, computed here on the CPU, and list every violation (a fastest run below
a bound that claims that execution). Prints a markdown table; exit 1 on any violation.

    python benchmarks/join_measured.py ROWS.jsonl --root benchmarks/models [--arch H200-SXM] [--markdown OUT.md]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.soundness.report import Measured, join, markdown  # noqa: E402


def load_rows(path: Path) -> tuple[list[Measured], dict[str, str], dict[str, str]]:
    """Fastest run per (problem, mode), the environment, and each problem's error if any."""
    measured: list[Measured] = []
    env: dict[str, str] = {}
    errors: dict[str, str] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        env = row.get("environment", env)
        for mode, t in row.get("measured", {}).items():
            measured.append(Measured(row["problem"], mode, t["min_seconds"], None))
        if "error" in row or "skipped" in row:
            errors[row["problem"]] = row.get("error") or row["skipped"]
    return measured, env, errors


def file_bounds(path: Path, arch: str) -> dict[str, float]:
    import solar

    report = solar.analyze(str(path), arch=arch)
    return {level: b.seconds for level, b in report.bounds.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", type=Path)
    p.add_argument("--root", type=Path, required=True, help="folder holding the timed files")
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)
    measured, env, errors = load_rows(args.rows)
    bounds: dict[str, dict[str, float]] = {}
    for name in sorted({m.case for m in measured}):
        try:
            bounds[name] = file_bounds(args.root / name, args.arch)
        except Exception as exc:  # reported; the file is left out of the table
            errors[name] = f"analysis failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    rows = join([m for m in measured if m.case in bounds], bounds)
    text = markdown(rows, env, args.arch)
    if errors:
        text += "\nNot in the table:\n" + "".join(f"- {k}: {v}\n" for k, v in sorted(errors.items()))
    if args.markdown:
        args.markdown.write_text(text)
    print(text)
    return 1 if any(r.ratio < 1 for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
