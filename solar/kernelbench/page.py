"""The self-contained HTML report: inline CSS, plots as base64 PNG, no network resources."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any

from solar.backends.levels import Level, claims
from solar.errors import SolarError
from solar.hardware import get_spec
from solar.kernelbench import plots
from solar.kernelbench.headroom import Joined
from solar.kernelbench.results import FINAL_STATUSES, Row
from solar.kernelbench.summary import (
    Context,
    arch_dependent,
    coverage,
    level_label,
    unsupported_ops,
)

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1320px;
 padding:0 16px;color:#1b1b1b}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}
.meta td{white-space:normal}.meta td:first-child{font-weight:600;background:#fafafa;white-space:nowrap}
.box{border-radius:6px;padding:10px 14px;margin:10px 0}
.bad{background:#fdecea;border:2px solid #c62828}.good{background:#edf7ed;border:1px solid #2e7d32}
.note{background:#fff8e1;border:1px solid #f9a825}
.s-ok{color:#2e7d32}.s-unsupported{color:#b26a00}.s-error{color:#c62828}.s-timeout{color:#6a1b9a}
.viol{background:#fdecea;font-weight:600}
img{max-width:100%;height:auto;display:block;margin:6px 0}
.msg{display:block;max-width:640px;white-space:normal;font-size:12px;color:#444}
nav a{margin-right:12px}
"""


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "–"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.2f} µs"


def fmt_count(x: float | None, unit: str) -> str:
    if x is None:
        return "–"
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.2f} {prefix}{unit}"
    return f"{x:.0f} {unit}"


def fmt_ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def html_table(
    head: Iterable[str], body: Iterable[Iterable[Any]], numeric: set[int] = frozenset()
) -> str:
    """A table; cells are escaped unless given as `("raw", html)`."""

    def cell(i: int, value: Any) -> str:
        cls = ' class="n"' if i in numeric else ""
        if isinstance(value, tuple) and value and value[0] == "raw":
            return f"<td{cls}>{value[1]}</td>"
        return f"<td{cls}>{escape(str(value))}</td>"

    rows = "".join("<tr>" + "".join(cell(i, v) for i, v in enumerate(r)) + "</tr>" for r in body)
    return "<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + f"</tr>{rows}</table>"


def _img(b64: str, alt: str) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{b64}">'


def _status(status: str) -> tuple[str, str]:
    return ("raw", f'<span class="s-{escape(status)}">{escape(status)}</span>')


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
        + html_table(
            ("problem", "GPU", "variant", "bound", "fastest run", "bound", "run/bound", "source"),
            body,
            {4, 5, 6},
        )
        + "</div>"
    )


def _coverage(rows: list[Row]) -> str:
    table = coverage(rows)
    body = [(lvl, *(c[s] for s in (*FINAL_STATUSES, "total"))) for lvl, c in table.items()]
    total = [sum(c[s] for c in table.values()) for s in (*FINAL_STATUSES, "total")]
    body.append(("all", *total))
    out = "<h2 id='coverage'>Coverage</h2><p>Problems per level by analysis status.</p>"
    out += html_table(("level", *FINAL_STATUSES, "total"), body, {1, 2, 3, 4, 5})
    differ = arch_dependent(rows)
    if differ:
        out += f"<p>Status differs between GPUs (the worse one is counted): {escape(', '.join(differ))}</p>"
    return out + _img(plots.coverage_png(table), "coverage per level")


def _unsupported(rows: list[Row]) -> str:
    blocked = unsupported_ops(rows)
    out = "<h2 id='unsupported'>Unsupported ops</h2>"
    if not blocked:
        return out + "<p>None: every problem's ops have a lowering.</p>"
    body = [
        (op, len(ps), ("raw", f"<span class='msg'>{escape(', '.join(ps))}</span>"))
        for op, ps in blocked
    ]
    out += html_table(("op", "problems blocked", "problems"), body, {1})
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
        (p, ", ".join(a), _status(s), ("raw", f"<span class='msg'>{escape(e)}</span>"))
        for (p, s, e), a in merged.items()
    ]
    return out + html_table(("problem", "GPUs", "status", "message"), body)


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
                    s["bound"],
                    level_label(s["level"]),
                    s["count"],
                    fmt_ratio(s["median"]),
                    fmt_ratio(s["geomean"]),
                    fmt_ratio(s["min"]),
                    fmt_ratio(s["max"]),
                )
                for s in stats
            ]
            out += html_table(
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


def _assumptions(rows: list[Row]) -> str:
    sets: dict[tuple[str, ...], list[str]] = {}
    for r in rows:
        if r.assumptions:
            sets.setdefault(r.assumptions, []).append(r.arch)
    out = "<h2 id='assumptions'>Assumptions</h2>"
    for lines, archs in sets.items():
        out += (
            f"<p>{escape(', '.join(sorted(set(archs))))}:</p><ul>"
            + "".join(f"<li>{escape(x)}</li>" for x in lines)
            + "</ul>"
        )
    return out


def _problems(joined: Joined) -> str:
    levels = list(joined.levels)
    violating = {(f.problem, f.arch, f.violation.execution) for f in joined.violations}
    head = [
        "problem",
        "level",
        "GPU",
        "status",
        "FLOPs",
        "DRAM bytes",
        *(f"{lvl} bound" for lvl in levels),
    ]
    for variant in joined.variants:
        head += [f"measured ({variant})", f"{variant} / fused"]
    body = []
    for e in joined.entries:
        r = e.row
        line: list[Any] = [r.problem, level_label(r.level), r.arch, _status(r.status)]
        line += [fmt_count(r.total("flops"), "FLOP"), fmt_count(r.total("dram_bytes"), "B")]
        line += [fmt_seconds(r.bound_seconds(lvl)) for lvl in levels]
        for variant in joined.variants:
            h = e.headroom(variant, Level.FUSED)
            mark = "viol" if (*r.key, variant) in violating else ""
            line += [
                fmt_seconds(e.seconds(variant)),
                ("raw", f"<span class='{mark}'>{escape(fmt_ratio(h))}</span>"),
            ]
        body.append(line)
    numeric = set(range(4, len(head)))
    return "<h2 id='problems'>Problems</h2>" + html_table(head, body, numeric)


def render(rows: list[Row], joined: Joined, ctx: Context, summary: dict) -> str:
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
            _problems(joined),
            _assumptions(rows),
        )
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>solar KernelBench report</title>"
        f"<style>{CSS}</style></head><body>{body}</body></html>\n"
    )
