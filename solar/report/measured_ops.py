"""Per-op measured headroom: measured kernel time per eager ATen op (solar.validate.per_op, recorded
on the GPU) joined to solar's op rows, each op's bound valid in context, the time lost, ranked.
The rows and the measurement file's reader live here; the join (solar.api.join_measured_ops)
runs where the loaded program is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from solar.bounded import loads_json, loads_json_lines
from solar.errors import UsageError
from solar.report.insight import Opportunity
from solar.report.units import fmt_seconds
from solar.userfiles import read_text

SLACK = 1e-9  # a measured time below bound·(1 − SLACK) is a violation


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MeasuredOp(_Model):
    index: int  # position among the eager calls solar recorded
    profiled_index: int  # position among the profiled top-level ops
    op: str  # ATen op as eager runs it
    source: str = ""
    module: str = ""
    kernels: int  # kernels (and memcpy/memset) the profiler attributed to it
    measured_seconds: float  # its kernel time, fastest rep
    bound_seconds: float  # its bound in context
    lost_seconds: float  # measured − bound
    binds: str = ""


class MeasuredOps(_Model):
    problem: str
    arch: str  # the spec the bounds are for
    measured_on: str = ""  # the GPU the row was measured on (its `arch`); compare like with like
    matched: int
    unmatched_measured: int  # profiled ops with no eager call of that name at that place
    unmatched_calls: int  # eager calls solar recorded that the profile does not show
    measured_seconds: float  # all kernel time of one call (ops + unattributed)
    unattributed_seconds: float
    unattributed_bound_seconds: float  # device work no eager call accounts for
    violations: list[str]
    ops: list[MeasuredOp]  # largest time lost first

    def describe(self) -> str:
        on = f", measured on {self.measured_on}" if self.measured_on else ""
        return (
            f"measured per op ({self.problem}, bounds for {self.arch}{on}): {self.matched} ops joined, "
            f"{self.unmatched_measured} profiled and {self.unmatched_calls} traced ops unmatched; "
            f"{len(self.violations)} below their bound"
        )


class _NotLines(UsageError):
    """A line of a per-op file that is not JSON: the file may be one JSON document."""


def read_rows(path: str | Path, problem: str | None) -> dict[str, Any]:
    """The per-op row for `problem` from a .json (one row) or .jsonl file (rows keyed "problem")."""
    text = read_text(path, "a per-op measurement file (benchmarks/measure_ops.py)", UsageError)
    try:
        rows = loads_json_lines(text, str(path), _NotLines)
    except _NotLines:
        rows = [loads_json(text, str(path), UsageError)]
    rows = [r for r in rows if isinstance(r, dict) and "ops" in r]
    if not rows:
        raise UsageError(f"{path}: no row with per-op times ('ops'); write it with benchmarks/measure_ops.py")
    if len(rows) == 1 and problem is None:
        return rows[0]
    names = [str(r.get("problem", "")) for r in rows]
    hits = [r for r, n in zip(rows, names) if problem and (n == problem or n.endswith("/" + problem))]
    if len(hits) != 1:
        shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
        raise UsageError(f"{path}: {len(hits)} rows for {problem!r} (rows: {shown}); pass a file with its row")
    return hits[0]


TOP = 5


def opportunities(mo: MeasuredOps) -> list[Opportunity]:
    """The ops that lose most time against their bound, as opportunities of kind "measured op"."""
    out = [
        Opportunity(
            kind="measured op", what=f"{o.op} #{o.index}" + (f" ({o.source})" if o.source else ""),
            seconds=o.lost_seconds,
            detail=f"measured {fmt_seconds(o.measured_seconds)} in {o.kernels} kernels, bound "
                   f"{fmt_seconds(o.bound_seconds)}" + (f" ({o.binds})" if o.binds else ""),
        )
        for o in mo.ops[:TOP] if o.lost_seconds > 0
    ]
    lost = mo.unattributed_seconds - mo.unattributed_bound_seconds
    if lost > 0:
        out.append(Opportunity(kind="measured op", what="device time no eager op launched", seconds=lost,
                               detail=f"measured {fmt_seconds(mo.unattributed_seconds)} unattributed"))
    return out


def with_measured_ops(report: Any, mo: MeasuredOps) -> Any:
    """The report with `mo` in its JSON and its top losses among the ranked opportunities."""
    ins = report.insights
    ranked = sorted([*(ins.opportunities if ins else []), *opportunities(mo)], key=lambda o: -o.seconds)
    update: dict[str, Any] = {"measured_ops": mo, "assumptions": [*report.assumptions, mo.describe()]}
    if ins is not None:
        update["insights"] = ins.model_copy(update={"opportunities": ranked})
    return report.model_copy(update=update)
