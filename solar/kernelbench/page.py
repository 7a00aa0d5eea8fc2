"""The suite's self-contained HTML report: plots as base64 PNG, the problem table (sortable, each
row expandable to its bounds, slowest ops, what to fix first and assumptions), the assumptions
once each; no network resources. The page's pieces are solar.report.html's."""

from __future__ import annotations

from html import escape
from typing import Any

from pydantic import BaseModel, ValidationError

from solar.backends.levels import Level, claims, title
from solar.errors import SolarError
from solar.hardware import get_spec
from solar.kernelbench import plots
from solar.kernelbench.headroom import Entry, Joined
from solar.kernelbench.results import FINAL_STATUSES, Row
from solar.kernelbench.summary import (
    Context,
    arch_dependent,
    coverage,
    level_label,
    unsupported_ops,
)
from solar.report.html import (
    BOUND_TAIL,
    AssumptionGroup,
    Cell,
    assumptions_html,
    bound_cells,
    bounds_table,
    breakable,
    count,
    describe_owners,
    fix_cell,
    fixes_block,
    fmt_ratio,
    fmt_seconds,
    folded,
    group_assumptions,
    level_head,
    ops_table,
    page,
    raw,
    seconds,
    table,
)
from solar.report.insight import Opportunity
from solar.report.model import BoundReport, OpReport


def _img(b64: str, alt: str) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{b64}">'


def _status(status: str):
    return raw(f'<span class="s-{escape(status)}">{escape(status)}</span>')


def _header(rows: list[Row], joined: Joined, ctx: Context, summary: dict) -> str:
    timing = summary["analysis"]["worker_seconds"] or {}
    run = summary["analysis"]
    meta = [
        ("root", ctx.root),
        ("GPUs", ", ".join(ctx.archs)),
        ("analysis flags", " ".join(ctx.flags) or "(defaults)"),
        ("problems", f"{summary['problems']} ({summary['rows']} problem × GPU rows)"),
        ("bound levels", ", ".join(joined.levels) or "–"),
        (
            "analysis time",
            (
                f"this run analysed {run['launched']} problems in {run['wall_seconds']:.1f} s wall with "
                f"{run['jobs']} jobs ({run['skipped']} problem × GPU pairs were already done); "
                if run["wall_seconds"] is not None
                else ""
            )
            + (
                f"per problem (worker wall time): median {timing['median']:.2f} s, max {timing['max']:.2f} s, "
                f"sum {timing['sum']:.1f} s"
                if timing
                else ""
            ),
        ),
        ("generated", f"{summary['generated']} by solar {summary['solar_version']}"),
    ]
    out = "<h1>solar: KernelBench headroom report</h1>"
    out += (
        "<table class='meta'>"
        + "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in meta)
        + "</table>"
    )
    if ctx.measure_note:
        out += f"<div class='box note'><b>--measure:</b> {escape(ctx.measure_note)}</div>"
    if not ctx.measured_files:
        out += (
            "<div class='box note'><b>No measured times were given</b> (--measured / --measure): this report "
            "shows the bound-only views — coverage, the SOL distribution and roofline positions at the SOL. "
            "Headroom and violation checks need measured times.</div>"
        )
    else:
        m = summary["measured"]
        files = "; ".join(f"{f['path']} ({f['format']}, {f['times']} times)" for f in m["files"])
        out += (
            f"<div class='box note'><b>Measured times:</b> {escape(files)}. Variants: "
            f"{escape(', '.join(m['variants']) or 'none')}; {m['matched_rows']} rows matched, "
            f"{m['unmatched']} times matched no row, {m['ambiguous']} were ambiguous. Headroom uses the "
            "median time (KernelBench files: the mean); violations compare the fastest run with the bounds."
        )
        if any(f["format"] == "kernelbench-baseline" for f in m["files"]):
            out += (
                " KernelBench baseline times are wall-clock times without an L2 flush (warm cache); "
                "the bounds assume a cold L2 unless the analysis flags say otherwise."
            )
        out += "</div>"
    return out


def _violations(joined: Joined) -> str:
    out = "<h2 id='violations'>Violations: measured faster than a lower bound</h2>"
    if not joined.has_measured:
        return out + "<p>Not checked: no measured times.</p>"
    if not joined.violations:
        return out + (
            "<div class='box good'>None: every measured run (its fastest time) is at or above every bound "
            "that applies to it.</div>"
        )
    body = [
        (
            f.problem,
            f.arch,
            f.violation.execution,
            f.violation.level,
            fmt_seconds(f.violation.measured_seconds),
            fmt_seconds(f.violation.bound_seconds),
            fmt_ratio(f.violation.ratio),
            f.source,
        )
        for f in joined.violations
    ]
    return out + (
        f"<div class='box bad'><b>{len(joined.violations)} VIOLATION(S)</b> — a measured run faster than a provable "
        "lower bound is a bug in solar (or in the measurement); each needs a fix, never a tolerance."
        + table(
            ("problem", "GPU", "variant", "bound", "fastest run", "bound", "run/bound", "source"),
            body,
            {4, 5, 6},
        )
        + "</div>"
    )


def _coverage(rows: list[Row]) -> str:
    counts = coverage(rows)
    body = [(lvl, *(c[s] for s in (*FINAL_STATUSES, "total"))) for lvl, c in counts.items()]
    total = [sum(c[s] for c in counts.values()) for s in (*FINAL_STATUSES, "total")]
    body.append(("all", *total))
    out = "<h2 id='coverage'>Coverage</h2><p>Problems per level by analysis status.</p>"
    out += table(("level", *FINAL_STATUSES, "total"), body, {1, 2, 3, 4, 5})
    differ = arch_dependent(rows)
    if differ:
        out += f"<p>Status differs between GPUs (the worse one is counted): {escape(', '.join(differ))}</p>"
    return out + _img(plots.coverage_png(counts), "coverage per level")


def _unsupported(rows: list[Row]) -> str:
    blocked = unsupported_ops(rows)
    out = "<h2 id='unsupported'>Unsupported ops</h2>"
    if not blocked:
        return out + "<p>None: every problem's ops have a lowering.</p>"
    body = [
        (op, len(ps), raw(f"<span class='msg'>{escape(', '.join(ps))}</span>"))
        for op, ps in blocked
    ]
    out += table(("op", "problems blocked", "problems"), body, {1})
    return out + _img(
        plots.unsupported_png([(op, len(ps)) for op, ps in blocked]), "unsupported ops"
    )


def _failures(rows: list[Row]) -> str:
    bad = [r for r in rows if r.status in ("error", "timeout")]
    out = "<h2 id='failures'>Errors and timeouts</h2>"
    if not bad:
        return out + "<p>None.</p>"
    merged: dict[tuple[str, str, str], list[str]] = {}
    for r in bad:
        merged.setdefault((r.problem, r.status, r.error or ""), []).append(r.arch)
    body = [
        (p, ", ".join(a), _status(s), raw(f"<span class='msg'>{escape(e)}</span>"))
        for (p, s, e), a in merged.items()
    ]
    return out + table(("problem", "GPUs", "status", "message"), body)


def _sol(rows: list[Row], archs: tuple[str, ...]) -> str:
    out = "<h2 id='sol'>Speed of light (bound-only view)</h2>"
    out += (
        "<p>Per GPU: the fused bound (SOL: a lower bound on any implementation), what binds it, and the "
        "unfused (one kernel per op) bound over the SOL — the most that fusing the program could gain.</p>"
    )
    for arch in archs:
        if any(r.arch == arch and r.status == "ok" for r in rows):
            out += _img(plots.sol_png(rows, arch), f"SOL distribution on {arch}")
    return out


def _headroom(joined: Joined, archs: tuple[str, ...], summary: dict) -> str:
    out = "<h2 id='headroom'>Headroom: measured / bound</h2>"
    if not joined.has_measured:
        return out + "<p>No measured times: headroom needs --measured or --measure.</p>"
    out += "<p>1× is the bound itself; anything left of the dashed line is a violation.</p>"
    for arch in archs:
        for variant in joined.variants:
            levels = [lvl for lvl in joined.levels if claims(lvl, variant)]
            if not any(
                e.row.arch == arch and e.headroom(variant, lvl) is not None
                for e in joined.entries
                for lvl in levels
            ):
                continue
            out += f"<h3>{escape(arch)} — {escape(variant)}</h3>"
            out += _img(
                plots.headroom_png(list(joined.entries), variant, joined.levels, arch),
                f"headroom {arch} {variant}",
            )
            stats = [
                s for s in summary["headroom"] if s["arch"] == arch and s["variant"] == variant
            ]
            body = [
                (
                    title(s["bound"]),
                    level_label(s["level"]),
                    s["count"],
                    fmt_ratio(s["median"]),
                    fmt_ratio(s["geomean"]),
                    fmt_ratio(s["min"]),
                    fmt_ratio(s["max"]),
                )
                for s in stats
            ]
            out += table(
                ("bound", "level", "problems", "median", "geomean", "min", "max"),
                body,
                {2, 3, 4, 5, 6},
            )
    return out


def _roofline(rows: list[Row], joined: Joined, archs: tuple[str, ...]) -> str:
    out = "<h2 id='roofline'>Roofline</h2><p>Arithmetic intensity (FLOP per compulsory DRAM byte) against "
    out += "throughput; hollow marks: at the SOL; filled marks: measured. Roofs from the GPU's spec.</p>"
    variant = joined.variants[0] if joined.variants else None
    for arch in archs:
        try:
            spec = get_spec(arch)
        except SolarError as exc:
            out += f"<p>{escape(arch)}: no roofs ({escape(str(exc))})</p>"
            continue
        out += _img(
            plots.roofline_png(rows, list(joined.entries), spec, variant), f"roofline {arch}"
        )
    return out


def _known(model: type[BaseModel], data: dict[str, Any]) -> Any:
    """A report model from a row's JSON, keeping the fields this version knows; rows written by
    another version of solar may have more or fewer (a missing one reads None, shown as a dash)."""
    known = {k: v for k, v in data.items() if k in model.model_fields}
    try:
        return model.model_validate(known)
    except ValidationError:
        return model.model_construct(**{k: known.get(k) for k in model.model_fields})


def _bounds(row: Row) -> dict[str, BoundReport]:
    return {lvl: _known(BoundReport, b) for lvl, b in (row.bounds or {}).items()}


def _fixes(row: Row) -> list[Opportunity]:
    return [_known(Opportunity, o) for o in row.fixes]


def _assumption_groups(rows: list[Row]) -> list[AssumptionGroup]:
    return group_assumptions({r.key: r.assumptions for r in rows if r.assumptions})


def _assumptions(rows: list[Row], groups: list[AssumptionGroup]) -> str:
    everyone = [r.key for r in rows if r.assumptions]
    out = "<h2 id='assumptions'>Assumptions</h2>"
    if not groups:
        return out + "<p>None recorded.</p>"
    shared = [g for g in groups if len({p for p, _ in g.owners}) > 1]
    own = [g for g in groups if len({p for p, _ in g.owners}) == 1]
    out += (
        "<p>Each line once, under the problems and GPUs whose analysis states it; a problem's row "
        "in the table above lists its own.</p>" + assumptions_html(shared, everyone, "problem")
    )
    if own:
        out += folded(
            f"{_plural(sum(len(g.lines) for g in own), 'line')} stated for one problem each",
            assumptions_html(own, everyone, "problem"),
        )
    return out


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _detail(row: Row, groups: list[AssumptionGroup], everyone: list[tuple[str, str]]) -> str:
    """What a problem's row unfolds to: its bounds, slowest ops, what to fix first and its
    assumptions (the lines only its problem states in full, shared groups by link)."""
    if row.status != "ok":
        return folded("message", f"<span class='msg'>{escape(row.error or '')}</span>")
    parts = "<h3>Bounds</h3>" + bounds_table(_bounds(row))
    recorded = row.op_count is not None  # rows of an older solar keep no ops or fixes
    if row.ops:
        ops = [_known(OpReport, op) for op in row.ops]
        some = "Slowest ops" if len(ops) < (row.op_count or 0) else "Ops"
        parts += f"<h3>{some} (unfused: one kernel each)</h3>" + ops_table(ops, row.op_count)
    parts += "<h3>What to fix first</h3>" + (
        fixes_block([], _fixes(row)) if recorded else "<p>Not recorded in this row.</p>"
    )
    mine = [g for g in groups if row.key in g.owners]
    own = [line for g in mine if {p for p, _ in g.owners} == {row.problem} for line in g.lines]
    shared = [g for g in mine if {p for p, _ in g.owners} != {row.problem}]
    parts += "<h3>Assumptions</h3>"
    if own:
        parts += "<ul>" + "".join(f"<li>{escape(x)}</li>" for x in own) + "</ul>"
    if shared:
        links = "; ".join(
            f"<a href='#{g.ident}'>{escape(describe_owners(g.owners, everyone, 'problem'))}</a> "
            f"({_plural(len(g.lines), 'line')})"
            for g in shared
        )
        parts += f"<p class='who'>Shared with other problems: {links}</p>"
    ops_part = f"{_plural(len(row.ops), 'op')}, " if row.ops else ""
    return folded(f"bounds, {ops_part}fixes, assumptions", parts)


def _problem_row(
    e: Entry, levels: list[str], variants: tuple[str, ...], violating: set
) -> list[Any]:
    r = e.row
    name = breakable(r.problem, "name")
    line: list[Any] = [name, r.arch, _status(r.status)]
    line += [count(r.total("flops"), "FLOP"), count(r.total("dram_bytes"), "B")]
    line += bound_cells(_bounds(r), levels)
    line.append(fix_cell(_fixes(r)))
    for variant in variants:
        h = e.headroom(variant, Level.FUSED)
        mark = "n viol" if (*r.key, variant) in violating else "n"
        line += [seconds(e.seconds(variant)), Cell(escape(fmt_ratio(h)), h, mark)]
    return line


def _problems(joined: Joined, groups: list[AssumptionGroup]) -> str:
    levels = list(joined.levels)
    violating = {(f.problem, f.arch, f.violation.execution) for f in joined.violations}
    head = ["problem", "GPU", "status", "FLOPs", "DRAM bytes", *level_head(levels)]
    head += [*BOUND_TAIL, "top fix"]
    for variant in joined.variants:
        head += [f"measured ({variant})", f"{variant} / fused"]
    body = [_problem_row(e, levels, joined.variants, violating) for e in joined.entries]
    everyone = [e.row.key for e in joined.entries if e.row.assumptions]
    details = [_detail(e.row, groups, everyone) for e in joined.entries]
    return (
        "<h2 id='problems'>Problems</h2><p>Click a header to sort; open a row for its bounds, "
        "slowest ops, what to fix first and assumptions. Bounds in level order; bottleneck and "
        "binding unit of the fused bound (SOL); the top fix is the first "
        "&ldquo;what to fix first&rdquo; item.</p>"
        + table(head, body, sortable=True, details=details, cls="problems")
    )


def render(rows: list[Row], joined: Joined, ctx: Context, summary: dict) -> str:
    groups = _assumption_groups(rows)
    nav = " ".join(
        f"<a href='#{i}'>{t}</a>"
        for i, t in (
            ("violations", "violations"),
            ("coverage", "coverage"),
            ("unsupported", "unsupported ops"),
            ("failures", "errors"),
            ("sol", "SOL"),
            ("headroom", "headroom"),
            ("roofline", "roofline"),
            ("problems", "problems"),
            ("assumptions", "assumptions"),
        )
    )
    body = "".join(
        (
            _header(rows, joined, ctx, summary),
            f"<nav>{nav}</nav>",
            _violations(joined),
            _coverage(rows),
            _unsupported(rows),
            _failures(rows),
            _sol(rows, ctx.archs),
            _headroom(joined, ctx.archs, summary),
            _roofline(rows, joined, ctx.archs),
            _problems(joined, groups),
            _assumptions(rows, groups),
        )
    )
    return page("solar KernelBench report", body)
