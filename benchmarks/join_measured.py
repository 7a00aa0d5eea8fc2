"""Join GPU timings of KernelBench-format files (benchmarks/measure_files.py output) with solar's
bounds for the same files, computed here on the CPU, and list every violation (a fastest run below
a bound that claims that execution). Prints a markdown table; exit 1 on any violation.

    python benchmarks/join_measured.py ROWS.jsonl --root benchmarks/models [--arch H200-SXM] [--markdown OUT.md]

A row named FAMILY:SCENARIO (benchmarks/measure_files.py's name for a timed transformers step) is
joined with that step's bounds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.rows import read_rows  # noqa: E402
from benchmarks.soundness.report import Measured, report  # noqa: E402


def load_rows(path: Path) -> tuple[list[Measured], dict[str, str], dict[str, str]]:
    """Fastest run per (problem, mode), the environment, and each problem's error if any."""
    measured: list[Measured] = []
    env: dict[str, str] = {}
    errors: dict[str, str] = {}
    for row in read_rows(path):
        env = row.get("environment", env)
        for mode, t in row.get("measured", {}).items():
            measured.append(Measured(row["problem"], mode, t["min_seconds"], None))
        if "error" in row or "skipped" in row:
            errors[row["problem"]] = row.get("error") or row["skipped"]
    return measured, env, errors


def file_bounds(path: Path, arch: str) -> dict[str, float]:
    """solar's bounds of a KernelBench-format file, or of the timed transformers step its name
    names (FAMILY:SCENARIO, benchmarks/hf_timed.py), built as a file is (nothing large allocated)."""
    import solar

    if path.is_file():
        report = solar.analyze(str(path), arch=arch)
    else:
        from benchmarks.hf_timed import program
        from solar.frontends.torch.loader import building

        with building():
            model, inputs = program(path.name)
        report = solar.analyze(model, inputs, arch=arch)
    return {level: b.seconds for level, b in report.bounds.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", type=Path)
    p.add_argument("--root", type=Path, required=True, help="folder holding the timed files")
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)
    measured, env, errors = load_rows(args.rows)
    return report(measured, env, args.arch, lambda name, arch: file_bounds(args.root / name, arch), args.markdown, errors)


if __name__ == "__main__":
    raise SystemExit(main())
