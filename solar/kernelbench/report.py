"""Writing a suite's report into its output folder: results.csv, summary.json, report.html."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from solar.kernelbench.headroom import Joined, join
from solar.kernelbench.page import render
from solar.kernelbench.results import RESULTS_FILE, Row, read_rows, sorted_rows, write_file
from solar.kernelbench.summary import Context, build_summary, results_csv


@dataclass(frozen=True)
class Written:
    """The report's files and what the report found."""

    csv: Path
    summary: Path
    html: Path
    joined: Joined
    summary_data: dict


def write_report(out: Path, ctx: Context, rows: list[Row] | None = None) -> Written:
    """Report on `rows` (default: every row in OUT/results.jsonl) with the context's measured files."""
    if rows is None:
        rows = sorted_rows(read_rows(out / RESULTS_FILE)[0])
    measurements = [m for f in ctx.measured_files for m in f.measurements]
    joined = join(rows, measurements)
    summary = build_summary(rows, joined, ctx)
    paths = (out / "results.csv", out / "summary.json", out / "report.html")
    write_file(paths[0], results_csv(joined))
    write_file(paths[1], json.dumps(summary, indent=2) + "\n")
    write_file(paths[2], render(rows, joined, ctx, summary))
    return Written(*paths, joined, summary)
