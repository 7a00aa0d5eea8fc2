"""The terminal rendering of reports: the per-op (or grouped) table, the bounds table, totals,
traffic and assumptions, as `solar analyze` prints them (rich tables)."""

from __future__ import annotations

from typing import Any

from solar.report.measured_ops import MeasuredOps
from solar.report.model import group_ops, top_ops
from solar.report.units import fmt_count, fmt_seconds

__all__ = ["COMPACT_OVER", "COMPACT_TOP", "FIX_FIRST", "console", "fmt_count", "fmt_seconds", "op_table",
           "print_fix_first", "print_measured_ops", "print_report", "print_serving", "table"]

def console():
    from rich.console import Console

    return Console(width=max(140, Console().width))


COMPACT_OVER, COMPACT_TOP = 40, 20  # above this many op rows the default table shows the top N and a rest


def op_table(report, per_op: bool, group_by: str | None):
    """The op table: every op (--per-op), a roll-up (--group-by), all ops of a small program, or the
    slowest COMPACT_TOP of a large one with "other" and "total" rows."""
    from rich.markup import escape
    from rich.table import Table

    def summary_row(table, row, label: str) -> None:
        table.add_row(
            escape(label), str(row.count), fmt_count(row.flops, "FLOP"), fmt_count(row.dram_bytes, "B"),
            fmt_seconds(row.seconds), f"{100 * row.share:.1f}%",
        )

    if group_by is not None:
        table = Table(title=f"ops by {group_by} (unfused: one kernel per op)", title_justify="left")
        for col in (group_by, "ops", "FLOPs", "DRAM bytes", "unfused time", "share"):
            table.add_column(col, overflow="fold")
        for row in group_ops(report.ops, group_by):
            summary_row(table, row, row.name)
        return table
    compact = not per_op and len(report.ops) > COMPACT_OVER
    shown, rest = top_ops(report.ops, COMPACT_TOP if compact else len(report.ops))
    table = Table(title="per op (unfused: one kernel per op)", title_justify="left")
    cols = ("op", "module", "einsum", "FLOPs", "DRAM bytes", "time bound", "bottleneck", "binds", "source")
    for col in cols:
        table.add_column(col, overflow="fold")
    for op in shown:
        eqs = op.einsum if per_op else [op.headline] if op.einsum else []
        table.add_row(
            op.op,
            escape(op.module),
            escape("\n".join(eqs)),
            fmt_count(op.flops, "FLOP"),
            fmt_count(op.dram_bytes, "B"),
            fmt_seconds(op.seconds),
            op.bottleneck,
            op.binds,
            op.source.split(": ", 1)[0],
        )
    if compact:
        for row in rest:
            table.add_row(
                f"{row.name} ({row.count} ops)", "", f"{100 * row.share:.1f}% of op time",
                fmt_count(row.flops, "FLOP"), fmt_count(row.dram_bytes, "B"), fmt_seconds(row.seconds),
                "", "", "",
            )
        table.caption = "--per-op shows every op; --group-by module|layer|op rolls them up"
    return table


def table(title: str, columns, show_lines: bool = False):
    """A left-titled rich table with these columns (folded when narrow); `title` is markup."""
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_lines=show_lines)
    for col in columns:
        t.add_column(col, overflow="fold")
    return t


def print_report(report, per_op: bool, group_by: str | None = None) -> None:
    from rich.markup import escape
    from rich.table import Table

    con = console()
    t = report.totals
    step = report.serving  # an hf: step is named by its model and scenario, not the traced class
    name = report.program if step is None else step.model
    con.print(f"[bold]{escape(name)}[/bold] on [bold]{escape(report.arch)}[/bold]")
    con.print(op_table(report, per_op, group_by))
    bt = Table(title="bounds", title_justify="left")
    for col in ("level", "time", "bottleneck", "compute", "memory", "launch"):
        bt.add_column(col)
    for level, b in report.bounds.items():
        bt.add_row(
            level,
            fmt_seconds(b.seconds),
            b.bottleneck + (f" ({b.binding_unit})" if b.bottleneck == "compute" and b.binding_unit else ""),
            fmt_seconds(b.compute_seconds),
            fmt_seconds(b.memory_seconds),
            fmt_seconds(b.launch_seconds),
        )
    con.print(bt)
    if report.serving is not None:
        print_serving(con, report.serving)
    con.print(
        f"totals: {fmt_count(t.flops, 'FLOP')} ({fmt_count(t.contraction_flops, 'FLOP')} in contractions), "
        f"compulsory DRAM {fmt_count(t.dram_bytes, 'B')}, eager DRAM ≥ {fmt_count(t.unfused_dram_bytes, 'B')}, "
        f"intensity {t.arithmetic_intensity:.1f} FLOP/B"
    )
    if report.traffic is not None:
        con.print(escape(report.traffic.summary()), highlight=False)
        for f in report.traffic.forced:
            if f.bytes > 0:
                con.print(f"  - {escape(f.kind)}: {escape(f.detail)} (+{fmt_count(f.bytes, 'B')})", highlight=False)
    print_fix_first(con, report)
    if report.measured_ops is not None:
        print_measured_ops(con, report.measured_ops)
    con.print("assumptions:")
    for line in report.assumptions:
        con.print(f"  - {escape(line)}", highlight=False)
    con.print()


def print_serving(con, s) -> None:
    from rich.markup import escape

    con.print(
        f"{escape(s.model)}: {s.layers} layers, weights {fmt_count(s.weight_bytes, 'B')}, "
        f"KV cache {fmt_count(s.kv_cache_bytes, 'B')}", highlight=False,
    )
    for level, b in s.per_layer.items():
        con.print(
            f"  per layer ({level}): {fmt_seconds(b['seconds'])} (compute {fmt_seconds(b['compute_seconds'])}, "
            f"memory {fmt_seconds(b['memory_seconds'])})", highlight=False,
        )


FIX_FIRST = 3


def print_fix_first(con, report) -> None:
    """The 'what to fix first' block: where each level gap comes from, and the top opportunities
    (solar.report.insight)."""
    from rich.markup import escape

    ins = report.insights
    if ins is None:
        return
    con.print("what to fix first:", highlight=False)
    for gap in ins.gaps:
        if gap.seconds <= 0:
            continue
        term = max(gap.by_term, key=lambda t: gap.by_term[t]) if gap.by_term else ""
        top = f"; most from {escape(gap.parts[0].name)}" if gap.parts else ""
        con.print(
            f"  {gap.lo} -> {gap.hi}: +{fmt_seconds(gap.seconds)} (mostly {term}){top}", highlight=False
        )
    for n, o in enumerate(ins.opportunities[:FIX_FIRST], 1):
        caveat = f" [caveat: {escape(o.caveat)}]" if o.caveat else ""
        together = f"; its fixes together at most {fmt_seconds(o.together)}" if o.together else ""
        gap = f" ({o.lo} -> {o.hi}{together})" if o.lo and o.hi else ""
        con.print(
            f"  {n}. {o.kind}: {escape(o.what)} — up to {fmt_seconds(o.seconds)}{gap}{caveat}",
            highlight=False,
        )


def print_measured_ops(con: Any, mo: MeasuredOps, top: int = 8) -> None:
    """The ops that lose most time against their bound, as a table (the text report)."""
    from rich.markup import escape

    t = table(escape(f"measured per op: {mo.matched} ops joined, largest time lost first"),
              ("op", "module / source", "kernels", "measured", "bound", "lost", "binds"))
    for o in mo.ops[:top]:
        t.add_row(escape(f"{o.op} #{o.index}"), escape(o.module or o.source), str(o.kernels), fmt_seconds(o.measured_seconds),
                  fmt_seconds(o.bound_seconds), fmt_seconds(o.lost_seconds), escape(o.binds))
    con.print(t)
    con.print(
        f"unattributed device time {fmt_seconds(mo.unattributed_seconds)} (bound "
        f"{fmt_seconds(mo.unattributed_bound_seconds)}); {len(mo.violations)} ops below their bound"
        + "".join(f"\n  violation: {escape(v)}" for v in mo.violations[:5]),
        highlight=False,
    )
