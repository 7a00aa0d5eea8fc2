"""Aggregates of a suite's results — coverage, unsupported ops, timing, headroom — and the machine
outputs: `summary.json` and `results.csv`."""

from __future__ import annotations

import csv
import datetime as _dt
import io
import statistics
from dataclasses import dataclass
from typing import Any

from solar.version import __version__
from solar.kernelbench.headroom import Joined, headroom_stats
from solar.kernelbench.measured import MeasuredFile
from solar.kernelbench.problems import natural_key
from solar.kernelbench.results import FINAL_STATUSES, Row

#: when GPUs disagree on a problem, the worse status counts (a timeout is worse than an error...).
_SEVERITY = {status: i for i, status in enumerate(FINAL_STATUSES)}


@dataclass(frozen=True)
class Context:
    """What the report says about how it was made (beyond the rows themselves)."""

    root: str
    archs: tuple[str, ...]
    flags: tuple[str, ...]
    wall_seconds: float | None = None
    jobs: int | None = None
    launched: int | None = None
    skipped: int | None = None
    measured_files: tuple[MeasuredFile, ...] = ()
    measure_note: str | None = None
    generated: str = ""

    def when(self) -> str:
        return self.generated or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def level_label(level: int | None) -> str:
    return f"level{level}" if level is not None else "other"


def problem_status(rows: list[Row]) -> dict[str, str]:
    """Each problem's status over its GPUs (the worst when they differ)."""
    status: dict[str, str] = {}
    for r in rows:
        old = status.get(r.problem)
        if old is None or _SEVERITY[r.status] > _SEVERITY[old]:
            status[r.problem] = r.status
    return status


def coverage(rows: list[Row]) -> dict[str, dict[str, int]]:
    """{level label: {status: problems, ..., total}} with every status present (0 when none)."""
    levels = {r.problem: r.level for r in rows}
    table: dict[str, dict[str, int]] = {}
    for problem, status in sorted(problem_status(rows).items(), key=lambda kv: natural_key(kv[0])):
        counts = table.setdefault(
            level_label(levels[problem]), {s: 0 for s in (*FINAL_STATUSES, "total")}
        )
        counts[status] += 1
        counts["total"] += 1
    return table


def arch_dependent(rows: list[Row]) -> list[str]:
    """Problems whose status differs between GPUs."""
    seen: dict[str, set[str]] = {}
    for r in rows:
        seen.setdefault(r.problem, set()).add(r.status)
    return sorted((p for p, s in seen.items() if len(s) > 1), key=natural_key)


def unsupported_ops(rows: list[Row]) -> list[tuple[str, list[str]]]:
    """(op, the problems it blocks), most-blocking first."""
    blocked: dict[str, set[str]] = {}
    for r in rows:
        if r.status == "unsupported" and r.op:
            blocked.setdefault(r.op, set()).add(r.problem)
    return sorted(
        ((op, sorted(ps, key=natural_key)) for op, ps in blocked.items()),
        key=lambda kv: (-len(kv[1]), kv[0]),
    )


def worker_seconds(rows: list[Row]) -> dict[str, float] | None:
    """Worker wall times, one per problem (a worker analyses every GPU of a problem at once)."""
    per_problem = {r.problem: r.seconds for r in rows}
    if not per_problem:
        return None
    values = list(per_problem.values())
    return {
        "problems": len(values),
        "sum": sum(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def build_summary(rows: list[Row], joined: Joined, ctx: Context) -> dict[str, Any]:
    measured = None
    if ctx.measured_files:
        measured = {
            "files": [
                {
                    "path": f.path,
                    "format": f.format,
                    "times": len(f.measurements),
                    "skipped": len(f.skipped),
                }
                for f in ctx.measured_files
            ],
            "variants": list(joined.variants),
            "matched_rows": sum(1 for e in joined.entries if e.measured),
            "unmatched": len(joined.unmatched),
            "ambiguous": len(joined.ambiguous),
        }
    return {
        "solar_version": __version__,
        "generated": ctx.when(),
        "root": ctx.root,
        "archs": list(ctx.archs),
        "flags": list(ctx.flags),
        "problems": len({r.problem for r in rows}),
        "rows": len(rows),
        "coverage": coverage(rows),
        "arch_dependent_status": arch_dependent(rows),
        "unsupported_ops": [
            {"op": op, "problems": len(ps), "examples": ps[:5]} for op, ps in unsupported_ops(rows)
        ],
        "analysis": {
            "wall_seconds": ctx.wall_seconds,
            "jobs": ctx.jobs,
            "launched": ctx.launched,
            "skipped": ctx.skipped,
            "worker_seconds": worker_seconds(rows),
        },
        "bound_levels": list(joined.levels),
        "measured": measured,
        "measure": ctx.measure_note,
        "headroom": headroom_stats(joined),
        "violations": [
            {
                "problem": f.problem,
                "arch": f.arch,
                "variant": f.violation.execution,
                "bound": f.violation.level,
                "measured_seconds": f.violation.measured_seconds,
                "bound_seconds": f.violation.bound_seconds,
                "ratio": f.violation.ratio,
                "source": f.source,
            }
            for f in joined.violations
        ],
    }


def results_csv(joined: Joined) -> str:
    """One line per (problem, arch): status, totals, every bound, measured times and headroom."""
    columns = ["problem", "level", "arch", "status", "op", "error", "seconds"]
    columns += ["flops", "contraction_flops", "dram_bytes", "arithmetic_intensity"]
    for level in joined.levels:
        columns += [f"{level}_seconds", f"{level}_bottleneck"]
    for variant in joined.variants:
        columns.append(f"measured_{variant}_seconds")
        columns += [f"headroom_{variant}_{level}" for level in joined.levels]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for e in joined.entries:
        r = e.row
        line: dict[str, Any] = {
            "problem": r.problem,
            "level": r.level,
            "arch": r.arch,
            "status": r.status,
            "op": r.op,
            "error": r.error,
            "seconds": f"{r.seconds:.3f}",
        }
        for name in ("flops", "contraction_flops", "dram_bytes", "arithmetic_intensity"):
            line[name] = (r.totals or {}).get(name)
        for level in joined.levels:
            bound = (r.bounds or {}).get(level) or {}
            line[f"{level}_seconds"] = bound.get("seconds")
            line[f"{level}_bottleneck"] = bound.get("bottleneck")
        for variant in joined.variants:
            line[f"measured_{variant}_seconds"] = e.seconds(variant)
            for level in joined.levels:
                line[f"headroom_{variant}_{level}"] = e.headroom(variant, level)
        writer.writerow(line)
    return buf.getvalue()
