"""Summarise `solar validate` results (JSON lines from benchmarks/h200_validation.py) into the
Markdown table docs/results/validation.md shows: violations (must be zero) and headroom (measured / bound) per
category, execution mode and bound level.

    python benchmarks/summarize_validation.py benchmarks/results/h200/*.jsonl
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.rows import read_rows  # noqa: E402
from solar.backends.levels import claims, headroom  # noqa: E402


def category(obj: dict) -> str:
    if obj.get("category"):
        return f"{obj['category']} ({obj.get('dtype', '?')})"
    return obj["problem"].split("/")[0]


def load(paths: list[str]) -> list[dict]:
    return [row for p in paths for row in read_rows(p)]


def summarise(rows: list[dict]) -> str:
    groups: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    violations, errors, measured = [], [], 0
    for obj in rows:
        if not obj.get("measured"):
            errors.append(f"{obj.get('problem')}: {obj.get('error') or obj.get('skipped')}")
            continue
        for mode, t in obj["measured"].items():
            measured += 1
            for level, bound in obj["bounds"].items():
                if claims(level, mode) and (h := headroom(t["median_seconds"], bound)) is not None:
                    groups[(category(obj), mode, level)].append(h)
        violations += [f"{obj['problem']}: {v['execution']} {v['measured_seconds']:.3e} s < {v['level']} {v['bound_seconds']:.3e} s" for v in obj.get("violations", [])]
    env = next((o["environment"] for o in rows if o.get("environment")), {})
    lines = [
        f"GPU: {env.get('gpu', '?')}, driver {env.get('driver_version', '?')}, torch {env.get('torch', '?')}, "
        f"CUDA {env.get('cuda', '?')}; {len(rows)} problems, {measured} timed runs (median of 30, L2 flushed before each).",
        "",
        f"**Violations: {len(violations)}**" + ("" if not violations else "\n\n" + "\n".join(f"- {v}" for v in violations)),
        "",
        "| category | mode | bound | n | headroom min | median | max |",
        "|---|---|---|---|---|---|---|",
    ]
    for (cat, mode, level), xs in sorted(groups.items()):
        lines.append(f"| {cat} | {mode} | {level} | {len(xs)} | {min(xs):.2f} | {statistics.median(xs):.2f} | {max(xs):.2f} |")
    if errors:
        lines += ["", "Not measured:"] + [f"- {e}" for e in errors]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summarise(load(sys.argv[1:])))
