"""The terminal rendering of reports, as `solar analyze` prints them (rich tables): the answer
first (the bounds and which level binds each execution), then the slowest ops, totals and traffic,
what to fix first and the assumptions (short lines; their full text with `verbose`)."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from solar.backends.levels import EXECUTIONS, claims
from solar.report.measured_ops import MeasuredOps
from solar.report.model import group_ops, top_ops
from solar.report.units import fmt_count, fmt_seconds

__all__ = ["FIX_FIRST", "PIPE_WIDTH", "TOP_OPS", "binds_line", "bounds_table", "console", "fmt_count", "fmt_seconds",
           "head", "op_table", "print_fix_first", "print_measured_ops", "print_report", "print_serving", "short",
           "table", "width"]

PIPE_WIDTH = 120  # the width of output that goes to a file or a pipe: the same text on every machine
TOP_OPS = 10  # op rows of the default table (--top)
FIX_FIRST = 3  # opportunities shown


def width() -> int:
    """The console width: $COLUMNS when set, else the terminal's, else PIPE_WIDTH."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else PIPE_WIDTH


def console():
    from rich.console import Console

    return Console(width=width())


# A line of text (an assumption, a caveat) is "key: head — more"; the head ends at the first clause break.
CLAUSE_BREAKS = (" — ", "; ", ": ", " (")


def head(text: str) -> str:
    """`text` up to its first clause break (CLAUSE_BREAKS)."""
    cut = min((k for k in (text.find(b) for b in CLAUSE_BREAKS) if k > 0), default=len(text))
    return text[:cut]


def short(line: str) -> str:
    """An assumption line's short form: its key and the head of its value (`cache: cold`)."""
    key, sep, value = line.partition(": ")
    return f"{key}{sep}{head(value)}" if sep else head(line)


def table(title: str, columns, show_lines: bool = False):
    """A left-titled rich table with these columns (folded when narrow); `title` is markup."""
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_lines=show_lines)
    for col in columns:
        t.add_column(col, overflow="fold")
    return t


def _compact(title: str, columns):
    """A left-titled table of one line per row, its columns two spaces apart (`title` is markup)."""
    from rich import box
    from rich.table import Table

    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
              collapse_padding=True)
    for col in columns:
        t.add_column(col, no_wrap=True, overflow="ellipsis")
    return t


def _one_line_table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]], room: int,
                    shrink: dict[str, int], drop: tuple[str, ...]):
    """A table of one line per row within `room` columns, two spaces between columns. Too wide,
    it cuts the `shrink` columns (in order, each to at least its width there; text cut ends in
    "…"), and where that is not enough leaves out the `drop` columns (in order) first. Every cell
    is markup-escaped."""
    from rich.cells import cell_len
    from rich.markup import escape

    natural = {c: max(cell_len(r[k]) for r in (header, *rows)) for k, c in enumerate(header)}
    shown = list(header)

    def least() -> int:  # the width of the shown columns with every shrink column at its least
        return sum(min(natural[c], shrink.get(c, natural[c])) + 2 for c in shown) - 2

    for c in drop:
        if least() > room and c in shown:
            shown.remove(c)
    widths = {c: natural[c] for c in shown}
    over = sum(w + 2 for w in widths.values()) - 2 - room
    for c, floor in shrink.items():
        if over > 0 and c in widths:
            cut = min(over, max(widths[c] - floor, 0))
            widths[c] -= cut
            over -= cut
    t = _compact(escape(title), shown)
    keep = [header.index(c) for c in shown]
    for row in rows:
        cells = [row[k] if cell_len(row[k]) <= widths[header[k]] else row[k][: widths[header[k]] - 1] + "…"
                 for k in keep]
        t.add_row(*map(escape, cells))
    return t


# the default op table, too wide for the console: what it cuts (to at least this width) and what it leaves out
OP_SHRINK = {"einsum": 16, "module": 12, "source": 16}
OP_DROP = ("FLOPs", "DRAM bytes", "einsum")


def op_table(report, per_op: bool, group_by: str | None, top: int = TOP_OPS, verbose: bool = False,
             room: int | None = None):
    """The op table: a roll-up (--group-by, identical layers folded into one row), every op with
    every einsum line (--per-op), or the `top` slowest ops, one line each (cut to fit `room`
    columns unless `verbose`), with "other" and "total" rows when some are left out."""
    from rich.markup import escape

    if group_by is not None:
        rows = group_ops(report.ops, group_by, fold=True)
        t = table(f"ops by {group_by} (unfused: one kernel per op)", (group_by, "ops", "FLOPs", "DRAM bytes",
                                                                       "unfused time", "share"))
        for row in rows:
            name = f"{row.name} × {row.repeat}" if row.repeat > 1 else row.name
            t.add_row(escape(name), str(row.count), fmt_count(row.flops, "FLOP"), fmt_count(row.dram_bytes, "B"),
                      fmt_seconds(row.seconds), f"{100 * row.share:.1f}%")
        if any(row.repeat > 1 for row in rows):
            t.caption = "× N: N groups of the same ops and the same time in one row, their sum"
        return t
    if per_op:
        t = table("per op (unfused: one kernel per op)",
                  ("op", "module", "einsum", "FLOPs", "DRAM bytes", "time bound", "bottleneck", "binds", "source"))
        for op in report.ops:
            t.add_row(op.op, escape(op.module), escape("\n".join(op.einsum)), fmt_count(op.flops, "FLOP"),
                      fmt_count(op.dram_bytes, "B"), fmt_seconds(op.seconds), op.bottleneck, op.binds,
                      escape(op.source.split(": ", 1)[0]))
        return t
    shown, summary = top_ops(report.ops, top)
    header = ("op", "module", "einsum", "FLOPs", "DRAM bytes", "time", "binds", "source")
    rows = [
        (op.op, op.module, op.headline, fmt_count(op.flops, "FLOP"), fmt_count(op.dram_bytes, "B"),
         fmt_seconds(op.seconds), op.binds, op.source.split(": ", 1)[0])
        for op in shown
    ]
    if len(summary) > 1:  # some left out: "other" and "total"
        rows += [
            (f"{row.name} ({row.count} ops, {100 * row.share:.1f}%)", "", "", fmt_count(row.flops, "FLOP"),
             fmt_count(row.dram_bytes, "B"), fmt_seconds(row.seconds), "", "")
            for row in summary
        ]
    keep = [k for k in range(len(header)) if any(row[k] for row in rows)]  # a column blank in every row goes
    header, rows = tuple(header[k] for k in keep), [tuple(row[k] for k in keep) for row in rows]
    title = (f"top {len(shown)} of {len(report.ops)} ops by time" if len(shown) < len(report.ops)
             else "ops by time") + " (unfused: one kernel per op)"
    if verbose:
        t = table(escape(title), header)
        for row in rows:
            t.add_row(*map(escape, row))
    else:
        t = _one_line_table(title, header, rows, room or width(), OP_SHRINK, OP_DROP)
    if len(summary) > 1:
        t.caption = "--top N, --per-op for every op; --group-by module|layer|op rolls them up"
    return t


def _unit(b) -> str:
    """The compute unit of a compute-bound level ("" otherwise: its bottleneck names what binds)."""
    return b.binding_unit if b.bottleneck == "compute" and b.binding_unit else ""


def bounds_table(report):
    """The bounds per level, in report order ("binds": the compute unit of a compute-bound level)."""
    t = _compact("bounds", ("level", "time", "bottleneck", "binds", "compute", "memory", "launch"))
    for level, b in report.bounds.items():
        t.add_row(level, fmt_seconds(b.seconds), b.bottleneck, _unit(b) or "–", fmt_seconds(b.compute_seconds),
                  fmt_seconds(b.memory_seconds), fmt_seconds(b.launch_seconds))
    return t


def binds_line(report) -> str:
    """Which level binds any implementation, and each execution's binding level with how many
    times slower it is (solar.backends.levels.claims); "" without a level that claims them all."""

    def binding(execution: str) -> str | None:
        levels = [name for name in report.bounds if claims(name, execution)]
        return max(levels, key=lambda name: report.bounds[name].seconds) if levels else None

    floor = binding("any")  # a level that claims every implementation
    if floor is None:
        return ""
    b = report.bounds[floor]
    what = f"{b.bottleneck} on {_unit(b)}" if _unit(b) else b.bottleneck
    line = f"binds: any implementation ≥ {fmt_seconds(b.seconds)} ({floor}: {what})"
    slower = [
        f"{execution} {report.bounds[level].seconds / b.seconds:.2f}x ({level})"
        for execution in EXECUTIONS
        if (level := binding(execution)) is not None
        and fmt_seconds(report.bounds[level].seconds) != fmt_seconds(b.seconds)
    ]
    return line + ("; " + ", ".join(slower) if slower else "")


def print_report(report, per_op: bool = False, group_by: str | None = None, *, top: int = TOP_OPS,
                 verbose: bool = False) -> None:
    """The report of one program on one GPU, the answer first (see the module docstring)."""
    from rich.markup import escape

    con = console()
    t = report.totals
    step = report.serving  # an hf: step is named by its model and scenario, not the traced class
    name = report.program if step is None else step.model
    con.print(f"[bold]{escape(name)}[/bold] on [bold]{escape(report.arch)}[/bold]")
    con.print(bounds_table(report))
    line = binds_line(report)
    for text in ([line] if line else []) + list(report.notices):
        con.print(escape(text), highlight=False)
    if report.serving is not None:
        print_serving(con, report.serving)
    con.print(op_table(report, per_op, group_by, top, verbose, con.width))
    con.print(
        f"totals: {fmt_count(t.flops, 'FLOP')}, {fmt_count(t.contraction_flops, 'FLOP')} in contractions; "
        f"DRAM {fmt_count(t.dram_bytes, 'B')} compulsory, ≥ {fmt_count(t.unfused_dram_bytes, 'B')} eager; "
        f"{t.arithmetic_intensity:.1f} FLOP/B", highlight=False,
    )
    if report.traffic is not None:
        for line in report.traffic.lines():
            con.print(escape(line), highlight=False)
        for f in report.traffic.forced:
            if f.bytes > 0:
                con.print(f"  - {escape(f.kind)}: {escape(f.detail)} (+{fmt_count(f.bytes, 'B')})", highlight=False)
    print_fix_first(con, report, verbose)
    if report.measured_ops is not None:
        print_measured_ops(con, report.measured_ops)
    if verbose:
        con.print("assumptions:")
        _hanging(con, [("-", text) for text in report.assumptions])
    else:
        con.print("assumptions (--verbose for the full text):")
        for text in report.assumptions:
            con.print(f"  {escape(short(text))}", highlight=False, no_wrap=True, overflow="ellipsis")
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


def print_fix_first(con, report, verbose: bool = False) -> None:
    """The 'what to fix first' block: where each level gap comes from (a gap that prints as zero is
    left out), and the top opportunities with the place they name (solar.report.insight)."""

    ins = report.insights
    if ins is None:
        return
    con.print("what to fix first:", highlight=False)
    gaps = []
    for gap in ins.gaps:
        if fmt_seconds(gap.seconds) == fmt_seconds(0.0) or gap.seconds <= 0:
            continue
        term = max(gap.by_term, key=lambda t: gap.by_term[t]) if gap.by_term else ""
        top = f"; most from {gap.parts[0].name}" if gap.parts else ""
        top += f" ({gap.parts[0].source.split(': ', 1)[0]})" if gap.parts and gap.parts[0].source else ""
        gaps.append(("", f"{gap.lo} -> {gap.hi}: +{fmt_seconds(gap.seconds)} (mostly {term}){top}"))
    fixes = []
    for n, o in enumerate(ins.opportunities[:FIX_FIRST], 1):
        where = f" ({o.where})" if o.where else ""
        times = f" (× {o.count})" if o.count > 1 else ""
        together = f"; its fixes together at most {fmt_seconds(o.together)}" if o.together else ""
        gap = f" ({o.lo} -> {o.hi}{together})" if o.lo and o.hi else ""
        caveat = f" [caveat: {o.caveat if verbose else head(o.caveat)}]" if o.caveat else ""
        fixes.append((f"{n}.", f"{o.kind}{where}: {o.what}{times} — up to {fmt_seconds(o.seconds)}{gap}{caveat}"))
    for items in (gaps, fixes):
        _hanging(con, items)


def _hanging(con, items: list[tuple[str, str]]) -> None:
    """Indented lines, each a label and a text that wraps under itself (not under the label)."""
    from rich.markup import escape
    from rich.padding import Padding
    from rich.table import Table

    if not items:
        return
    labelled = any(label for label, _ in items)
    grid = Table.grid(padding=(0, 1))
    if labelled:
        grid.add_column(no_wrap=True)
    grid.add_column()
    for label, text in items:
        grid.add_row(*([label] if labelled else []), escape(text))
    con.print(Padding(grid, (0, 0, 0, 2)), highlight=False)


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
