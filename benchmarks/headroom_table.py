"""Markdown headroom table of committed H200 runs: measured rows (benchmarks/measure_files.py
output) joined with the bounds recorded for the same files (benchmarks/level_bounds.py), with every
violation (a fastest run below a level that claims that execution, solar.backends.levels.violations).

    python benchmarks/headroom_table.py benchmarks/results/h200/models.jsonl \\
        benchmarks/results/h200/models_bounds.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.rows import read_rows  # noqa: E402
from solar.backends.levels import EAGER, Level, headroom, ordered, violations  # noqa: E402


def _us(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def table(measured: list[dict], bounds: list[dict]) -> tuple[str, list[str]]:
    recorded = {r["problem"]: r.get("bounds") for r in bounds}
    levels = ordered({lv for b in recorded.values() for lv in (b or {})})
    head = ["problem", "eager", "compile", *levels, "eager / fused", "best / fused"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    found = []
    for row in sorted(measured, key=lambda r: r["problem"]):
        b = recorded.get(row["problem"])
        times = {m: t["min_seconds"] for m, t in row.get("measured", {}).items()}
        if not b or not times:
            continue
        found += [
            f"{row['problem']}: {v.execution} {_us(v.measured_seconds)} < {v.level} {_us(v.bound_seconds)}"
            for v in violations(b, times)
        ]
        best = min(times.values())
        cells = [row["problem"], _us(times.get("eager")), _us(times.get("compile"))]
        cells += [_us(b.get(lv)) for lv in levels]
        eager = headroom(times.get(EAGER), b[Level.FUSED])
        cells += ["—" if eager is None else f"{eager:.2f}×", f"{headroom(best, b[Level.FUSED]):.2f}×"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("measured", type=Path)
    p.add_argument("bounds", type=Path)
    args = p.parse_args(argv)
    text, violations = table(read_rows(args.measured), read_rows(args.bounds))
    print(text)
    print(f"\nviolations: {len(violations)}")
    for v in violations:
        print("  " + v)
    return 1 if violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
