"""Per-op measured headroom: measured kernel time per eager ATen op (solar.validate.per_op, recorded
on the GPU) joined to solar's op rows, each op's bound valid in context, the time lost, ranked.

The join: the profiled top-level ops and the eager calls solar recorded from the exported graph
(solar.frontends.torch.eager) are both in program order and named by their ATen op; the two name
sequences are aligned (longest matching blocks), so an op one side has and the other lacks costs
only itself. Each matched op's bound is its device floor in the eager_host pipeline
(solar.backends.dispatch.eager_stages: the unfused per-kernel bound of the op instance it became,
raised to a recurrence's critical path), which docs/BOUNDS.md §19 shows is a lower bound on that
op's kernel time inside the program, in a run that starts with L2 flushed as the profiler's does.
Device work no call accounts for (entry 0 of the stages) is compared with the unattributed time."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from solar.errors import UsageError

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


def _name(op: str) -> str:
    """aten::add_ and aten.add_.Tensor both -> add_."""
    if op.startswith("aten::"):
        return op[len("aten::"):]
    parts = op.split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "aten" else op


def read_rows(path: str | Path, problem: str | None) -> dict[str, Any]:
    """The per-op row for `problem` from a .json (one row) or .jsonl file (rows keyed "problem")."""
    from solar.userfiles import read_text

    text = read_text(path, "a per-op measurement file (benchmarks/measure_ops.py)", UsageError)
    try:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        try:
            rows = [json.loads(text)]
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}: not JSON or JSON lines ({exc.msg} at line {exc.lineno})") from None
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


def measured_ops(loaded: Any, arch: str, row: dict[str, Any], precision: str = "exact",
                 clock_mhz: float | None = None) -> MeasuredOps:
    """Join the per-op `row` to the eager calls of `loaded` on `arch` (cold cache, write-back)."""
    from solar.api import _eager_calls
    from solar.backends.assumptions import Assumptions
    from solar.backends.bounds import analyze_graph
    from solar.backends.dispatch import eager_stages
    from solar.backends.derived import recurrence_level
    from solar.hardware import get_spec

    calls = _eager_calls(loaded)
    problem = str(row.get("problem", loaded.program.name))
    if not calls:
        raise UsageError(f"{problem}: per-op times join the eager calls of a traced PyTorch forward; this program has none")
    spec = get_spec(arch)
    assumptions = Assumptions(precision=precision, clock_mhz=clock_mhz, tf32_flags=loaded.flags)
    a = analyze_graph(loaded.graph, spec, assumptions)
    rec = recurrence_level(a, loaded.graph, spec, assumptions)
    stages = eager_stages(a, calls, rec.instance_floors if rec is not None else {})
    rows_by_instance = {op.instance: op for op in a.ops if op.instance is not None}
    measured = row["ops"]
    left = [_name(str(m["op"])) for m in measured]
    right = [_name(c.op) for c in calls]
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    ops: list[MeasuredOp] = []
    violations: list[str] = []
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            m, i = measured[block.a + k], block.b + k
            call = calls[i]
            bound = stages.device[i + 1]
            r = rows_by_instance.get(call.instance)
            seconds = float(m["kernel_seconds"])
            ops.append(MeasuredOp(
                index=i, profiled_index=block.a + k, op=call.op, source="" if r is None else r.source, module="" if r is None else r.module,
                kernels=int(m.get("kernels", 0)), measured_seconds=seconds, bound_seconds=bound,
                lost_seconds=seconds - bound, binds="" if r is None or bound == 0 else r.binds,
            ))
            if seconds < bound * (1 - SLACK):
                violations.append(f"{call.op} #{i}: measured {seconds * 1e6:.3f} µs < bound {bound * 1e6:.3f} µs")
    unattributed = float(row.get("unattributed_kernel_seconds", 0.0))
    ops.sort(key=lambda o: -o.lost_seconds)
    return MeasuredOps(
        problem=problem, arch=spec.name, measured_on=str(row.get("arch", "")), matched=len(ops), unmatched_measured=len(left) - len(ops),
        unmatched_calls=len(right) - len(ops),
        measured_seconds=float(row.get("total_kernel_seconds", sum(o.measured_seconds for o in ops) + unattributed)),
        unattributed_seconds=unattributed, unattributed_bound_seconds=stages.device[0],
        violations=violations, ops=ops,
    )


TOP = 5


def opportunities(mo: MeasuredOps) -> list[Any]:
    """The ops that lose most time against their bound, as opportunities of kind "measured op"."""
    from solar.insight import Opportunity
    from solar.render import fmt_seconds

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


def print_measured_ops(con: Any, mo: MeasuredOps, top: int = 8) -> None:
    """The ops that lose most time against their bound, as a table (the text report)."""
    from rich.markup import escape

    from solar.render import fmt_seconds
    from solar.render import table as new_table

    table = new_table(escape(f"measured per op: {mo.matched} ops joined, largest time lost first"),
                      ("op", "module / source", "kernels", "measured", "bound", "lost", "binds"))
    for o in mo.ops[:top]:
        table.add_row(escape(f"{o.op} #{o.index}"), escape(o.module or o.source), str(o.kernels), fmt_seconds(o.measured_seconds),
                      fmt_seconds(o.bound_seconds), fmt_seconds(o.lost_seconds), escape(o.binds))
    con.print(table)
    con.print(
        f"unattributed device time {fmt_seconds(mo.unattributed_seconds)} (bound "
        f"{fmt_seconds(mo.unattributed_bound_seconds)}); {len(mo.violations)} ops below their bound"
        + "".join(f"\n  violation: {escape(v)}" for v in mo.violations[:5]),
        highlight=False,
    )
