"""Record solar's bounds (every level, seconds) for the files behind a measured-rows file, so that a
CPU test can hold them against the GPU times without the sources (KernelBench's are not committed).

    python benchmarks/level_bounds.py benchmarks/results/h200/kernelbench_eager.jsonl \\
        benchmarks/results/h200/kernelbench_level2_compile.jsonl \\
        --root /path/to/KernelBench/KernelBench --out benchmarks/results/h200/kernelbench_bounds.jsonl
    python benchmarks/level_bounds.py benchmarks/results/h200/models.jsonl --root benchmarks/models \\
        --out benchmarks/results/h200/models_bounds.jsonl

or convert the results of a `solar kernelbench ROOT --arch H200-SXM --out DIR` run (isolated, with
a timeout per problem): `--from-kernelbench DIR/results.jsonl --out ...`.

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

from benchmarks.rows import read_rows  # noqa: E402


def bounds_row(problem: str, path: Path, arch: str) -> dict:
    import solar
    from solar.api import analyze_loaded, load

    try:
        report = analyze_loaded(load(str(path)), arch)
    except Exception as exc:  # noqa: BLE001 (recorded; the test skips problems solar cannot analyse)
        return {
            "problem": path.name,
            "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
        }
    return {
        "problem": problem,
        "arch": arch,
        "solar_version": solar.__version__,
        "bounds": {level: b.seconds for level, b in report.bounds.items()},
    }


def _problems(rows: list[Path]) -> set[str]:
    return {r["problem"] for f in rows for r in read_rows(f)}


def convert(rows: list[Path], results: Path, out: Path) -> int:
    """Rows of a `solar kernelbench` run (problems named level/file) for the problems `rows`
    measured."""
    import solar

    wanted = _problems(rows)
    done: dict[str, dict] = {}
    for r in read_rows(results):
        name = r["problem"]
        if name not in wanted:
            continue
        if r.get("status") == "ok":
            done[name] = {
                "problem": name,
                "arch": r["arch"],
                "solar_version": solar.__version__,
                "bounds": {k: b["seconds"] for k, b in r["bounds"].items()},
            }
        else:
            done[name] = {
                "problem": name,
                "error": f"{r.get('status')}: {(r.get('error') or '')[:200]}",
            }
    out.write_text("".join(json.dumps(done[k]) + "\n" for k in sorted(done)))
    print(f"{len(done)} of {len(wanted)} problems", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", type=Path, nargs="+", help="measured-rows files (their problems are bounded)")
    p.add_argument("--root", type=Path, default=None)
    p.add_argument(
        "--from-kernelbench", type=Path, default=None, help="a `solar kernelbench` results.jsonl"
    )
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if args.from_kernelbench is not None:
        return convert(args.rows, args.from_kernelbench, args.out)
    if args.root is None:
        p.error("give --root or --from-kernelbench")
    names = sorted(_problems(args.rows))
    files = {f.name: f for f in args.root.rglob("*.py")}
    with args.out.open("w") as out:
        for name in names:
            row = (
                bounds_row(name, files[name], args.arch)
                if name in files
                else {"problem": name, "error": "file not found"}
            )
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"{name}: {row.get('error', 'ok')}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
