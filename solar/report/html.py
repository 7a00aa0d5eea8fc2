"""The HTML pages' shared pieces — inline CSS and sort script, escaped tables that scroll inside the
page, the bounds, per-op and "what to fix first" blocks, assumptions grouped by who states them —
and the single-model page of `solar analyze --html`. Pages are self-contained: no network, no files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from solar.backends.levels import Level, ordered, title
from solar.errors import UsageError
from solar.report.insight import Gap, Insights, Opportunity
from solar.report.measured_ops import MeasuredOps
from solar.report.model import BoundReport, OpReport, Report
from solar.report.units import fmt_seconds as _seconds
from solar.userfiles import check_writable
from solar.version import __version__

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1320px;
 padding:0 16px;color:#1b1b1b}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
div.scroll{max-width:100%;overflow-x:auto;margin:6px 0 12px}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3;white-space:normal}td{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}
table.sortable>thead>tr>th{cursor:pointer;user-select:none;text-decoration:underline dotted #999}
table.sortable>thead>tr>th[aria-sort=ascending]::after{content:" \\25B2";color:#333}
table.sortable>thead>tr>th[aria-sort=descending]::after{content:" \\25BC";color:#333}
td.wrap{white-space:normal;min-width:140px;max-width:240px;overflow-wrap:anywhere}
td.fix{white-space:normal;min-width:160px;max-width:280px;font-size:12px;line-height:1.3}
td.fix>div{display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical;overflow:hidden}
td.name{white-space:normal;min-width:100px;max-width:220px;overflow-wrap:anywhere}
td.eq{white-space:normal;min-width:220px;max-width:420px;font:12px ui-monospace,Menlo,Consolas,monospace;
 overflow-wrap:anywhere}
tr.more>td{border-top:none;padding:0 8px 0 24px;background:#fcfcfc;white-space:normal;line-height:1.2}
tr.more summary{font-size:11px;color:#666;cursor:pointer}
tr.more details[open]{padding-bottom:8px}
.meta td{white-space:normal}.meta td:first-child{font-weight:600;background:#fafafa;white-space:nowrap}
.box{border-radius:6px;padding:10px 14px;margin:10px 0}
.bad{background:#fdecea;border:2px solid #c62828}.good{background:#edf7ed;border:1px solid #2e7d32}
.note{background:#fff8e1;border:1px solid #f9a825}
.s-ok{color:#2e7d32}.s-unsupported{color:#b26a00}.s-error{color:#c62828}.s-timeout{color:#6a1b9a}
.viol{background:#fdecea;font-weight:600}
img{max-width:100%;height:auto;display:block;margin:6px 0}
.msg{display:block;max-width:640px;white-space:normal;font-size:12px;color:#444}
.who{color:#555;font-size:13px}.asm{margin:4px 0 14px}
ol.fix li,ul.gap li{margin:2px 0}.caveat{color:#8a5a00;font-size:12px}
nav a{margin-right:12px}
table.problems{font-size:12px}table.problems>tbody>tr>td,table.problems>thead>tr>th{padding:3px 6px}
"""

# Click a header of a `table.sortable` to sort by that column (again: the other way). Cells with a
# `data-v` sort as numbers, others as text; empty values go last either way. A table with one
# <tbody> per row (a row and its detail row) moves the tbodies.
SORT_SCRIPT = """
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var up = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        var many = table.tBodies.length > 1;
        var items = Array.prototype.slice.call(many ? table.tBodies : table.tBodies[0].rows);
        function key(item) {
          var cell = (many ? item.rows[0] : item).cells[col];
          var v = cell ? cell.getAttribute("data-v") : null;
          if (v !== null) return v === "" ? null : parseFloat(v);
          var t = cell ? cell.textContent.trim() : "";
          return t === "" || t === "\\u2013" ? null : t;
        }
        items.sort(function (a, b) {
          var x = key(a), y = key(b);
          if (x === null || y === null) return (x === null) - (y === null);
          var d = typeof x === "number" && typeof y === "number" ? x - y
            : String(x).localeCompare(String(y), undefined, {numeric: true});
          return up ? d : -d;
        });
        var parent = many ? table : table.tBodies[0];
        items.forEach(function (item) { parent.appendChild(item); });
      });
    });
  });
});
"""

DASH = "–"


def fmt_seconds(s: float | None) -> str:
    return DASH if s is None else _seconds(s)


def fmt_count(x: float | None, unit: str) -> str:
    """Four significant digits (`137.4 GFLOP`): tables of many columns stay narrow."""
    if x is None:
        return DASH
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.4g} {prefix}{unit}"
    return f"{x:.0f} {unit}"


def fmt_ratio(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}×"


@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell: its HTML, the number it sorts by (None: its text), its class."""

    html: str
    key: float | None = None
    cls: str = ""


def text(value: Any, cls: str = "") -> Cell:
    return Cell(escape(str(value)), cls=cls)


def raw(html: str, key: float | None = None, cls: str = "") -> Cell:
    """A cell of trusted HTML (built here from escaped parts)."""
    return Cell(html, key, cls)


def num(value: float | None, shown: str) -> Cell:
    """A right-aligned number shown as `shown` that sorts by `value`."""
    return Cell(escape(shown), value, "n")


def seconds(value: float | None) -> Cell:
    return num(value, fmt_seconds(value))


def count(value: float | None, unit: str) -> Cell:
    return num(value, fmt_count(value, unit))


def share(fraction: float | None) -> Cell:
    return num(fraction, DASH if fraction is None else f"{100 * fraction:.1f}%")


def breakable(name: str, cls: str = "") -> Cell:
    """A dotted, slashed or snake_case name that may wrap after each `.`, `/` and `_`."""
    html = escape(name)
    for mark in "./_":
        html = html.replace(mark, f"{mark}<wbr>")
    return raw(html, cls=cls)


def _td(cell: Any, numeric: bool) -> str:
    if not isinstance(cell, Cell):
        cell = text(cell, "n" if numeric else "")
    cls = f' class="{cell.cls}"' if cell.cls else ""
    number = cell.key is not None or "n" in cell.cls.split()
    key = f' data-v="{"" if cell.key is None else repr(float(cell.key))}"' if number else ""
    return f"<td{cls}{key}>{cell.html}</td>"


def table(
    head: Sequence[str],
    rows: Iterable[Sequence[Any]],
    numeric: Iterable[int] = (),
    *,
    sortable: bool = False,
    details: Sequence[str | None] | None = None,
    cls: str = "",
) -> str:
    """A table inside a box that scrolls sideways (the page never does). Cells are `Cell`s or
    plain values (escaped; right-aligned in the `numeric` columns). With `details`, each row sits
    in a <tbody> of its own with the row's detail HTML (when not None) in a full-width row under
    it, so sorting keeps the two together."""
    numbers = set(numeric)
    classes = " ".join(c for c in (cls, "sortable" if sortable else "") if c)
    attr = f' class="{classes}"' if classes else ""
    lines = [
        "<tr>" + "".join(_td(c, i in numbers) for i, c in enumerate(r)) + "</tr>" for r in rows
    ]
    if details is None:
        body = "<tbody>" + "".join(lines) + "</tbody>"
    else:
        body = "".join(
            f"<tbody>{line}"
            + (
                ""
                if more is None
                else f"<tr class='more'><td colspan='{len(head)}'>{more}</td></tr>"
            )
            + "</tbody>"
            for line, more in zip(lines, details, strict=True)
        )
    tip = " title='click to sort'" if sortable else ""
    names = "".join(f"<th{tip}>{escape(h).replace('_', '_<wbr>')}</th>" for h in head)
    header = f"<thead><tr>{names}</tr></thead>"
    return f"<div class='scroll'><table{attr}>{header}{body}</table></div>"


def page(heading: str, body: str) -> str:
    """A whole self-contained document."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(heading)}</title><style>{CSS}</style><script>{SORT_SCRIPT}</script>"
        f"</head><body>{body}</body></html>\n"
    )


def folded(summary: str, inner: str) -> str:
    """A closed <details> block (summary is HTML)."""
    return f"<details><summary>{summary}</summary>{inner}</details>"


# ---- the parts of a report -----------------------------------------------------------------------


def level_head(levels: Sequence[str]) -> list[str]:
    return [title(lvl) for lvl in levels]


def binding_unit(b: BoundReport) -> str:
    """The unit that binds a bound: the compute unit of a compute-bound one, DRAM for a memory
    bound one (as an op's `binds` says), none for a launch-bound one."""
    if b.bottleneck == "compute":
        return b.binding_unit or DASH
    return "dram" if b.bottleneck == "memory" else DASH


def bound_cells(bounds: Mapping[str, BoundReport], levels: Sequence[str]) -> list[Cell]:
    """Each level's time, then what binds the fused bound: its bottleneck and binding unit."""
    sol = bounds.get(Level.FUSED)
    return [
        *(seconds(b.seconds if (b := bounds.get(lvl)) else None) for lvl in levels),
        text(sol.bottleneck if sol else DASH),
        text(binding_unit(sol) if sol else DASH),
    ]


BOUND_TAIL = ("bottleneck", "binding unit")


def bounds_table(bounds: Mapping[str, BoundReport]) -> str:
    """One row per level, in level order."""
    rows = []
    for lvl in ordered(bounds):
        b = bounds[lvl]
        rows.append(
            (
                title(lvl),
                seconds(b.seconds),
                b.bottleneck,
                binding_unit(b),
                seconds(b.compute_seconds),
                seconds(b.memory_seconds),
                seconds(b.launch_seconds),
            )
        )
    head = ("level", "time", "bottleneck", "binding unit", "compute", "memory", "launch")
    return table(head, rows)


def ops_table(ops: Sequence[OpReport], total: int | None = None) -> str:
    """The ops slowest first (unfused: one kernel each), sortable; an op of several einsum lines
    shows its headline and folds the rest."""
    ranked = sorted(ops, key=lambda o: -o.seconds)
    op_seconds = sum(o.seconds for o in ops)

    def einsum(op: OpReport) -> Cell:
        head = escape(op.headline)
        rest = [e for e in op.einsum if e != op.headline]
        if not rest:
            return raw(head, cls="eq")
        return raw(folded(head, "<br>".join(escape(e) for e in rest)), cls="eq")

    rows = [
        (
            num(k, str(k)),
            breakable(op.op, "name"),
            breakable(op.module or DASH, "name"),
            einsum(op),
            count(op.flops, "FLOP"),
            count(op.dram_bytes, "B"),
            seconds(op.seconds),
            share(op.seconds / op_seconds if op_seconds else None),
            op.bottleneck,
            op.binds or DASH,
            raw(escape(op.source.split(": ", 1)[0]), cls="wrap"),
        )
        for k, op in enumerate(ranked, 1)
    ]
    head = (
        "#",
        "op",
        "module",
        "einsum",
        "FLOPs",
        "DRAM bytes",
        "time bound",
        "share",
        "bottleneck",
        "binds",
        "source",
    )
    shown = len(ranked) if total is None else total
    note = (
        f"<p class='who'>The {len(ranked)} slowest of {shown} ops.</p>"
        if shown > len(ranked)
        else ""
    )
    return note + table(head, rows, sortable=True)


def fix_line(o: Opportunity) -> str:
    """One opportunity in a line of text: what, how much, between which levels."""
    together = f"; its fixes together at most {fmt_seconds(o.together)}" if o.together else ""
    gap = f" ({title(o.lo)} → {title(o.hi)}{together})" if o.lo and o.hi else ""
    return f"{o.kind}: {o.what} — up to {fmt_seconds(o.seconds)}{gap}"


def fix_cell(fixes: Sequence[Opportunity]) -> Cell:
    """The first opportunity, cut to two lines (the whole line on hover and in the details); it
    sorts by the time it could win."""
    if not fixes:
        return Cell(escape(DASH), None, "fix")
    o = fixes[0]
    line = escape(f"up to {fmt_seconds(o.seconds)} — {o.kind}: {o.what}")
    return Cell(f"<div title='{escape(fix_line(o))}'>{line}</div>", o.seconds, "fix")


def fixes_block(gaps: Sequence[Gap], fixes: Sequence[Opportunity]) -> str:
    """Where each level gap comes from, then the opportunities, largest first."""
    items = []
    for gap in gaps:
        if gap.seconds <= 0:
            continue
        term = max(gap.by_term, key=lambda t: gap.by_term[t]) if gap.by_term else ""
        top = f"; most from {escape(gap.parts[0].name)}" if gap.parts else ""
        items.append(
            f"<li>{escape(title(gap.lo))} → {escape(title(gap.hi))}: +{escape(fmt_seconds(gap.seconds))}"
            f" (mostly {escape(term)}){top}</li>"
        )
    out = f"<ul class='gap'>{''.join(items)}</ul>" if items else ""
    if fixes:
        out += (
            "<ol class='fix'>"
            + "".join(
                f"<li>{escape(fix_line(o))}"
                + (f"<div class='caveat'>caveat: {escape(o.caveat)}</div>" if o.caveat else "")
                + "</li>"
                for o in fixes
            )
            + "</ol>"
        )
    return out or "<p>Nothing to fix: the levels agree.</p>"


# ---- assumptions, each stated once ---------------------------------------------------------------

Owner = tuple[str, str]  # (problem or program, GPU)


@dataclass(frozen=True)
class AssumptionGroup:
    """Assumption lines stated by exactly the same owners (problem, GPU)."""

    ident: str
    lines: tuple[str, ...]
    owners: tuple[Owner, ...]


def group_assumptions(stated: Mapping[Owner, Sequence[str]]) -> list[AssumptionGroup]:
    """Every distinct line once, lines grouped by the set of owners stating them: the groups shared
    most widely first, lines in the order first stated."""
    holders: dict[str, list[Owner]] = {}
    for owner, lines in stated.items():
        for line in dict.fromkeys(lines):
            holders.setdefault(line, []).append(owner)
    groups: dict[tuple[Owner, ...], list[str]] = {}
    for line, owners in holders.items():
        groups.setdefault(tuple(owners), []).append(line)
    ranked = sorted(groups.items(), key=lambda kv: -len(kv[0]))
    return [
        AssumptionGroup(f"asm-{k}", tuple(lines), owners)
        for k, (owners, lines) in enumerate(ranked, 1)
    ]


def _names(items: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def describe_owners(owners: Sequence[Owner], everyone: Sequence[Owner], noun: str) -> str:
    """Who states a group, shortly: `every problem on every GPU`, `3 problems (a, b, c) on L4`,
    `H100-SXM, L4` (one program), or the (problem, GPU) pairs when they are no such product."""
    names = list(dict.fromkeys(n for n, _ in owners))
    archs = list(dict.fromkeys(a for _, a in owners))
    all_names = {n for n, _ in everyone}
    all_archs = {a for _, a in everyone}
    if len(set(owners)) != len(names) * len(archs):
        pairs = [f"{n} on {a}" for n, a in owners]
        return f"{len(pairs)} {noun}–GPU pairs: {_names(pairs)}" if len(pairs) > 1 else pairs[0]
    where = "every GPU" if len(all_archs) > 1 and set(archs) == all_archs else ", ".join(archs)
    if len(all_names) == 1:
        return where
    if set(names) == all_names:
        who = f"every {noun}"
    elif len(names) == 1:
        who = names[0]
    else:
        who = f"{len(names)} {noun}s ({_names(names)})"
    return f"{who} on {where}"


def assumptions_html(
    groups: Sequence[AssumptionGroup], everyone: Sequence[Owner], noun: str
) -> str:
    """Each group once, headed by who states it."""
    return "".join(
        f"<div class='asm' id='{g.ident}'><div class='who'><b>{escape(describe_owners(g.owners, everyone, noun))}"
        f"</b> ({len(g.owners)} of {len(everyone)})</div><ul>"
        + "".join(f"<li>{escape(x)}</li>" for x in g.lines)
        + "</ul></div>"
        for g in groups
    )


# ---- the single-model page -----------------------------------------------------------------------

HTML_SUFFIXES = (".html", ".htm")


def check_html_path(path: str) -> str:
    """An --html path that can be written: an .html name in an existing, writable folder, not a
    folder itself (checked before any analysis runs)."""
    if Path(path).suffix.lower() not in HTML_SUFFIXES:
        raise UsageError(f"--html {path}: name an .html file")
    check_writable(path, "--html", UsageError)
    return path


def program_name(report: Report) -> str:
    """How a page names a program: an `hf:` step by its model and scenario, not the traced class."""
    step = report.serving
    return report.program if step is None else f"{step.model} ({step.scenario})"


def _overview(reports: Sequence[Report]) -> str:
    levels = ordered({lvl for r in reports for lvl in r.bounds})
    rows, links = [], []
    for r in reports:
        fixes = r.insights.opportunities if r.insights else []
        rows.append(
            (
                raw(f"<a href='#gpu-{escape(r.arch)}'>{escape(r.arch)}</a>"),
                *bound_cells(r.bounds, levels),
                fix_cell(fixes),
            )
        )
        links.append(r.arch)
    head = ("GPU", *level_head(levels), *BOUND_TAIL, "top fix")
    return "<h2 id='bounds'>Bounds</h2>" + table(head, rows, sortable=len(reports) > 1)


def _section(r: Report) -> str:
    t = r.totals
    out = f"<h2 id='gpu-{escape(r.arch)}'>{escape(program_name(r))} on {escape(r.arch)}</h2>"
    out += "<h3>Bounds</h3>" + bounds_table(r.bounds)
    out += (
        f"<p>{escape(fmt_count(t.flops, 'FLOP'))} ({escape(fmt_count(t.contraction_flops, 'FLOP'))} in "
        f"contractions), compulsory DRAM {escape(fmt_count(t.dram_bytes, 'B'))}, eager DRAM ≥ "
        f"{escape(fmt_count(t.unfused_dram_bytes, 'B'))}, intensity {t.arithmetic_intensity:.1f} FLOP/B</p>"
    )
    if r.traffic is not None:
        forced = [f for f in r.traffic.forced if f.bytes > 0]
        out += f"<p>{escape(r.traffic.summary())}</p>" + (
            "<ul>"
            + "".join(
                f"<li>{escape(f.kind)}: {escape(f.detail)} (+{escape(fmt_count(f.bytes, 'B'))})</li>"
                for f in forced
            )
            + "</ul>"
            if forced
            else ""
        )
    ins = r.insights or Insights(gaps=[], opportunities=[])
    out += "<h3>What to fix first</h3>" + fixes_block(ins.gaps, ins.opportunities)
    out += f"<h3>Per op ({len(r.ops)} ops, unfused: one kernel each)</h3>" + ops_table(r.ops)
    if r.measured_ops is not None:
        out += _measured_ops(r.measured_ops)
    return out


def _measured_ops(mo: MeasuredOps) -> str:
    """Each measured op against its bound, the most time lost first (--measured-ops)."""
    rows = [
        (
            f"{o.op} #{o.index}",
            raw(escape(o.module or o.source), cls="wrap"),
            num(o.kernels, str(o.kernels)),
            seconds(o.measured_seconds),
            seconds(o.bound_seconds),
            seconds(o.lost_seconds),
            o.binds or DASH,
        )
        for o in mo.ops
    ]
    head = ("op", "module / source", "kernels", "measured", "bound", "lost", "binds")
    violations = "".join(f"<li>{escape(v)}</li>" for v in mo.violations)
    return (
        f"<h3>Measured per op</h3><p>{escape(mo.describe())}</p>"
        + table(head, rows, sortable=True)
        + (
            f"<div class='box bad'>Ops below their bound:<ul>{violations}</ul></div>"
            if violations
            else ""
        )
    )


def render_page(reports: Sequence[Report]) -> str:
    """One page for one program on one or more GPUs: the bounds on each GPU, then a section per
    GPU (bounds, what to fix first, every op), then the assumptions, each stated once."""
    first = reports[0]
    name = program_name(first)
    stated = {(name, r.arch): r.assumptions for r in reports}
    everyone = list(stated)
    meta = [
        ("program", name),
        ("GPUs", ", ".join(r.arch for r in reports)),
        ("ops", str(len(first.ops))),
        ("generated by", f"solar {__version__} (`solar analyze --html`)"),
    ]
    nav = " ".join(
        f"<a href='#{i}'>{escape(t)}</a>"
        for i, t in (
            ("bounds", "bounds"),
            *((f"gpu-{r.arch}", r.arch) for r in reports),
            ("assumptions", "assumptions"),
        )
    )
    body = (
        f"<h1>solar: {escape(name)}</h1>"
        + "<table class='meta'>"
        + "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in meta)
        + f"</table><nav>{nav}</nav>"
        + _overview(reports)
        + "".join(_section(r) for r in reports)
        + "<h2 id='assumptions'>Assumptions</h2>"
        + assumptions_html(group_assumptions(stated), everyone, "program")
    )
    return page(f"solar: {name}", body)


def write_page(path: str, reports: Sequence[Report]) -> None:
    """Write the single-model page (a path checked by check_html_path)."""
    try:
        Path(path).write_text(render_page(reports), encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"--html {path!r}: cannot write ({exc.strerror}); pick another path"
        ) from None
