"""Record solar's bounds (every level, seconds) for the files behind a measured-rows file, so that a
CPU test can hold them against the GPU times without the sources (KernelBench's are not committed).

    python benchmarks/level_bounds.py benchmarks/results/h200/kernelbench_eager.jsonl \\
        --root /path/to/KernelBench/KernelBench --out benchmarks/results/h200/kernelbench_bounds.jsonl
    python benchmarks/level_bounds.py benchmarks/results/h200/models.jsonl --root benchmarks/models \\
        --out benchmarks/results/h200/models_bounds.jsonl

A file is found by name anywhere under --root (KernelBench's level1/ level2/ level3/). Each output
row is {problem, arch, solar_version, bounds: {level: seconds}} or {problem, error}.
tests/test_level_oracles.py reads them; rerun after a change that moves a bound."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def bounds_row(path: Path, arch: str) -> dict:
    import solar
    from solar.api import analyze_loaded, load

    try:
        report = analyze_loaded(load(str(path)), arch)
    except Exception as exc:  # recorded; the test skips problems solar cannot analyse
        return {"problem": path.name, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
    return {
        "problem": path.name,
        "arch": arch,
        "solar_version": solar.__version__,
        "bounds": {level: b.seconds for level, b in report.bounds.items()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", type=Path)
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    names = sorted({json.loads(line)["problem"] for line in args.rows.read_text().splitlines() if line.strip()})
    files = {f.name: f for f in args.root.rglob("*.py")}
    with args.out.open("w") as out:
        for name in names:
            row = bounds_row(files[name], args.arch) if name in files else {"problem": name, "error": "file not found"}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"{name}: {row.get('error', 'ok')}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
