"""One result row per (problem, GPU) and the `results.jsonl` file that holds them.

Rows are appended as problems finish, so an interrupted run keeps what it did; on reading, the last
row of a (problem, arch) pair wins and unreadable lines (a row cut off by a kill) are skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from solar.kernelbench.problems import natural_key
from solar.report.model import OpReport

Status = Literal["ok", "unsupported", "error", "timeout"]
#: statuses of a finished attempt: a resumed run skips pairs that have one.
FINAL_STATUSES: tuple[str, ...] = ("ok", "unsupported", "error", "timeout")
RESULTS_FILE = "results.jsonl"
ROW_OPS = 10  # the slowest ops a row keeps for the report (all of them would grow the file a lot)
ROW_FIXES = 3  # the "what to fix first" items a row keeps


class Row(BaseModel):
    """The outcome of analysing one problem for one GPU.

    `totals` and `bounds` are `solar analyze --json`'s objects as printed (so bound levels added to
    solar later, such as `cache_aware`, pass through). `seconds` is the wall time of the worker
    subprocess, which analysed every GPU of the run at once (imports included). `flags` are the
    analysis flags it ran with; a resumed run redoes pairs that ran with other flags. `ops` are
    the ROW_OPS slowest of the program's `op_count` ops and `fixes` its first opportunities, as
    the JSON prints them (report_fields)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    problem: str
    level: int | None
    arch: str
    status: Status
    op: str | None = None
    error: str | None = None
    seconds: float
    flags: tuple[str, ...] = ()
    exit_code: int | None = None
    totals: dict[str, Any] | None = None
    bounds: dict[str, dict[str, Any]] | None = None
    assumptions: tuple[str, ...] = ()
    ops: tuple[dict[str, Any], ...] = ()
    op_count: int | None = None
    fixes: tuple[dict[str, Any], ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.problem, self.arch)

    def bound_seconds(self, level: str) -> float | None:
        """Seconds of bound `level` (fused, unfused, cache_aware, ...), None when absent."""
        bound = (self.bounds or {}).get(level)
        return None if bound is None else float(bound["seconds"])

    def total(self, name: str) -> float | None:
        value = (self.totals or {}).get(name)
        return None if value is None else float(value)


def report_fields(report: dict[str, Any]) -> dict[str, Any]:
    """A row's fields from one `solar analyze --json` report: totals, bounds and assumptions as
    printed; the ROW_OPS slowest ops, each with its headline einsum line only; the first ROW_FIXES
    opportunities. Ops of a shape this solar does not read (another version's worker) are left
    out, as rows of an older solar have none."""
    fields = {
        "totals": report.get("totals"),
        "bounds": report.get("bounds"),
        "assumptions": tuple(report.get("assumptions", ())),
    }
    try:
        ops = [OpReport.model_validate(op) for op in report.get("ops", ())]
    except ValidationError:
        return fields
    slowest = sorted(ops, key=lambda op: -op.seconds)[:ROW_OPS]
    insights = report.get("insights") or {}
    return {
        **fields,
        "ops": tuple(
            op.model_copy(
                update={"einsum": [op.headline] if op.einsum else [], "contractions": []}
            ).model_dump(mode="json")
            for op in slowest
        ),
        "op_count": len(ops),
        "fixes": tuple(insights.get("opportunities", ())[:ROW_FIXES]),
    }


def read_rows(path: Path) -> tuple[dict[tuple[str, str], Row], int]:
    """The latest row per (problem, arch) in a results file, and the number of unreadable lines
    (not UTF-8, not JSON, not a row)."""
    rows: dict[tuple[str, str], Row] = {}
    bad = 0
    if not path.is_file():
        return rows, bad
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            row = Row.model_validate(json.loads(line.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValidationError):
            bad += 1
            continue
        rows[row.key] = row
    return rows, bad


def sorted_rows(rows: dict[tuple[str, str], Row] | list[Row]) -> list[Row]:
    values = rows.values() if isinstance(rows, dict) else rows
    return sorted(values, key=lambda r: (natural_key(r.problem), r.arch))


class RowWriter:
    """Appends rows to a results file, one JSON object per line, flushed as each arrives."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        torn = path.is_file() and path.stat().st_size > 0 and not path.read_bytes().endswith(b"\n")
        self._file = path.open("a", encoding="utf-8")
        if torn:  # a line cut off by a kill: end it so the next row starts on its own line
            self._file.write("\n")

    def write(self, row: Row) -> None:
        self._file.write(row.model_dump_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def compact(path: Path) -> list[Row]:
    """Rewrite a results file with only the latest row per pair, in natural order (atomically)."""
    rows, _ = read_rows(path)
    ordered = sorted_rows(rows)
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(r.model_dump_json() + "\n" for r in ordered), encoding="utf-8")
    os.replace(tmp, path)
    return ordered
