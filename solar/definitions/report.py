"""The outputs of `solar definitions`: OUT/bounds.jsonl (one line per definition, workload and GPU with
every bound level, and the score when measured), and the kernelbench report files (summary.json,
results.csv, report.html, written by solar.kernelbench.report) with the definitions' scores added."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solar.definitions.scores import Timing, as_record, per_definition, score_rows, write_scores
from solar.definitions.suite import Case
from solar.kernelbench.measured import MeasuredFile, Measurement
from solar.kernelbench.report import write_report
from solar.kernelbench.results import Row, write_file
from solar.kernelbench.summary import Context
from solar.report.html import fmt_ratio, fmt_seconds, table

BOUNDS_FILE = "bounds.jsonl"


def definition_rows(all_cases: list[Case], rows: list[Row]) -> list[dict[str, Any]]:
    """One record per (definition, workload, GPU) that has a runner row."""
    by_rel = {c.rel: c for c in all_cases}
    out = []
    for r in rows:
        c = by_rel[r.problem]
        out.append({
            "definition": c.definition.name,
            "op_type": c.definition.op_type,
            "workload": c.workload.uuid,
            "axes": c.axes,
            "arch": r.arch,
            "status": r.status,
            "op": r.op,
            "error": r.error,
            "flags": list(r.flags),
            "problem": r.problem,
            "bounds": r.bounds,
            "totals": r.totals,
        })
    out.sort(key=lambda d: (d["definition"], d["arch"], d["workload"]))
    return out


@dataclass(frozen=True)
class Written:
    lines: tuple[str, ...]  # what the command prints
    violations: int


def _measurements(records: list[dict], timings: list[Timing]):
    """The timings as kernelbench Measurements of the problems (kernel and baseline variants), so
    that the suite report joins them: headroom per bound level and violations."""
    rel = {(r["definition"], r["workload"]): r["problem"] for r in records}
    by_file: dict[str, list[Measurement]] = {}
    for t in timings:
        problem = rel.get((t.definition, t.workload))
        if problem is None:
            continue
        ms = by_file.setdefault(t.source, [])
        ms.append(Measurement(problem, t.arch, "kernel", t.kernel_seconds, t.source))
        if t.baseline_seconds is not None:
            ms.append(Measurement(problem, t.arch, "baseline", t.baseline_seconds, t.source))
    return tuple(MeasuredFile(f, "definition timings", tuple(ms), ()) for f, ms in by_file.items())


def _scores_html(per_def: list[dict], scores: list) -> str:
    head = ["definition", "GPU", "workloads", "scored", "mean score", "median headroom", "violations", "suspicious"]
    body = [
        [d["definition"], d["arch"], d["workloads"], d["scored"],
         "–" if d["score"] is None else f"{d['score']:.3f}", fmt_ratio(d["headroom_median"]),
         d["violations"], d["suspicious"]]
        for d in per_def
    ]
    flagged = [s for s in scores if s.violation or s.suspicious]
    detail = table(
        ["definition", "workload", "GPU", "T_SOL", "T_k", "T_b", "score", "note"],
        [[s.definition, s.workload, s.arch, fmt_seconds(s.sol_seconds), fmt_seconds(s.kernel_seconds),
          fmt_seconds(s.baseline_seconds), "–" if s.score is None else f"{s.score:.3f}", s.note or ""]
         for s in flagged],
        {3, 4, 5, 6},
    ) if flagged else "<p>No violations and nothing suspicious.</p>"
    return (
        "<h2 id='scores'>SOL scores</h2><p>S = 1 / (1 + (T_k − T_SOL) / (T_b − T_SOL)), T_SOL the "
        "tightest bound on any implementation; per definition the mean over scored workloads.</p>"
        + table(head, body, {2, 3, 4, 5, 6, 7}) + "<h3>Violations and suspicious kernels</h3>" + detail
    )


def write_definitions_report(
    out: Path, root: str, config: Any, stats: Any, rows: list[Row], records: list[dict],
    timings: list[Timing], suspicious_ratio: float,
) -> Written:

    scores, unmatched = score_rows(records, timings, suspicious_ratio) if timings else ([], [])
    by_key = {(s.definition, s.workload, s.arch): s for s in scores}
    lines = []
    for r in records:
        s = by_key.get((r["definition"], r["workload"], r["arch"]))
        lines.append(json.dumps({**r, **({"score": as_record(s)} if s else {})}) + "\n")
    write_file(out / BOUNDS_FILE, "".join(lines))
    archs = tuple(config.archs) + tuple(sorted({r.arch for r in rows} - set(config.archs)))
    ctx = Context(
        root=str(root), archs=archs, flags=config.flags, wall_seconds=stats.wall_seconds,
        jobs=config.jobs, launched=stats.launched, skipped=stats.skipped,
        measured_files=_measurements(records, timings),
    )
    written = write_report(out, ctx, rows)
    per_def = per_definition(scores)
    summary = {
        **written.summary_data,
        "definitions": sorted({r["definition"] for r in records}),
        "scores": per_def,
        "unmatched_timings": len(unmatched),
    }
    write_file(written.summary, json.dumps(summary, indent=2) + "\n")
    lines = []
    if timings:
        write_scores(out, scores)
        html = written.html.read_text(encoding="utf-8")
        write_file(written.html, html.replace("</body>", _scores_html(per_def, scores) + "</body>", 1))
        for d in per_def:
            shown = "–" if d["score"] is None else f"{d['score']:.3f}"
            lines.append(f"{d['definition']} [{d['arch']}]: score {shown} over {d['scored']} workloads, "
                         f"median headroom {d['headroom_median']:.2f}x, {d['violations']} violations, {d['suspicious']} suspicious")
        if unmatched:
            lines.append(f"{len(unmatched)} measured times matched no bounded workload (definition, uuid, GPU)")
    cov = written.summary_data["coverage"]
    counts = {s: sum(c[s] for c in cov.values()) for s in ("ok", "unsupported", "error", "timeout")}
    lines.append(
        f"{len({r['problem'] for r in records})} workloads: " + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f"; {out / BOUNDS_FILE}; report: {written.html}"
    )
    violations = len(written.joined.violations) + sum(s.violation for s in scores)
    if violations:
        lines.append(f"[bold red]{violations} VIOLATION(S)[/]: measured below a lower bound (see the report)")
    return Written(tuple(lines), violations)
