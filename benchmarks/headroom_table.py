"""Markdown headroom table of committed H200 runs: measured rows (benchmarks/measure_files.py
output) joined with the bounds recorded for the same files (benchmarks/level_bounds.py), with every
violation (a fastest run below a level that claims that execution, solar.validate.run.LEVEL_MODES).

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
from solar.validate.run import LEVEL_MODES  # noqa: E402

LEVELS = ("fused", "cache_aware", "library", "unfused", "eager_host")


def _us(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"


def table(measured: list[dict], bounds: list[dict]) -> tuple[str, list[str]]:
    recorded = {r["problem"]: r.get("bounds") for r in bounds}
    levels = [lv for lv in LEVELS if any(lv in (b or {}) for b in recorded.values())]
    head = ["problem", "eager", "compile", *levels, "eager / fused", "best / fused"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    violations = []
    for row in sorted(measured, key=lambda r: r["problem"]):
        b = recorded.get(row["problem"])
        times = {m: t["min_seconds"] for m, t in row.get("measured", {}).items()}
        if not b or not times:
            continue
        for level, seconds in b.items():
            for mode, t in times.items():
                if mode in LEVEL_MODES.get(level, frozenset()) and seconds > t:
                    violations.append(f"{row['problem']}: {mode} {_us(t)} < {level} {_us(seconds)}")
        best = min(times.values())
        cells = [row["problem"], _us(times.get("eager")), _us(times.get("compile"))]
        cells += [_us(b.get(lv)) for lv in levels]
        cells += [f"{times['eager'] / b['fused']:.2f}×" if "eager" in times else "—", f"{best / b['fused']:.2f}×"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), violations


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
