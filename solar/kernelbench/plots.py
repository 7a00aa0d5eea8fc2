"""The report's plots, drawn with matplotlib's Agg backend and returned as base64 PNG text to embed
in the HTML (no files, no network)."""

from __future__ import annotations

import base64
import io
import math
from typing import Any

from solar.backends.levels import Level, claims, title
from solar.kernelbench.headroom import Entry
from solar.kernelbench.results import Row
from solar.usecases.plots import log_axes, log_ticks, pyplot, seconds_label

STATUS_COLORS = {
    "ok": "#2e7d32",
    "unsupported": "#f9a825",
    "error": "#c62828",
    "timeout": "#6a1b9a",
}
_DPI = 80
HEADROOM_COLUMNS = 3  # headroom histograms per line of the figure


def _png(fig: Any) -> str:
    log_ticks(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight", metadata={"Software": None})
    pyplot().close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _counts(axis: Any) -> None:
    """Whole-number ticks on an axis that counts problems."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _level_label(level: int | None) -> str:
    return f"level {level}" if level is not None else "other"


def _level_color(level: int | None) -> str:
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
    return "#7f7f7f" if level is None else palette[(level - 1) % len(palette)]


def _log_bins(values: list[float], per_decade: int = 5) -> list[float]:
    """Log-spaced bin edges covering `values`; a value within rounding of an edge (a ratio of
    0.9999999999) counts as on it, so equal bounds do not open a bin of their own."""
    slack = 1e-6
    lo = math.floor(math.log10(min(values)) * per_decade + slack) / per_decade
    hi = math.ceil(math.log10(max(values)) * per_decade - slack) / per_decade
    if hi <= lo:
        hi = lo + 1 / per_decade
    steps = round((hi - lo) * per_decade)
    return [10 ** (lo + i / per_decade) for i in range(steps + 1)]


def _by_level(pairs: list[tuple[int | None, float]]) -> dict[int | None, list[float]]:
    out: dict[int | None, list[float]] = {}
    for level, value in pairs:
        out.setdefault(level, []).append(value)
    return dict(sorted(out.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def _hist_by_level(
    ax: Any, pairs: list[tuple[int | None, float]], xlabel: str, label: Any = None
) -> None:
    if not pairs:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    bins = _log_bins([v for _, v in pairs])
    groups = _by_level([(level, min(max(v, bins[0]), bins[-1])) for level, v in pairs])
    ax.hist(
        list(groups.values()),
        bins=bins,
        stacked=True,
        color=[_level_color(lv) for lv in groups],
        label=[_level_label(lv) for lv in groups],
    )
    log_axes(ax, "x", label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("problems")
    _counts(ax.yaxis)
    ax.legend(fontsize=8)


def coverage_png(counts: dict[str, dict[str, int]]) -> str:
    """Stacked bars: problems per level by status."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.45 * len(counts)))
    labels = list(counts)
    left = [0] * len(labels)
    for status, color in STATUS_COLORS.items():
        widths = [counts[lbl].get(status, 0) for lbl in labels]
        ax.barh(labels, widths, left=left, color=color, label=status)
        left = [a + b for a, b in zip(left, widths)]
    ax.invert_yaxis()
    ax.set_xlabel("problems")
    _counts(ax.xaxis)
    ax.legend(ncol=4, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    return _png(fig)


def unsupported_png(blocked: list[tuple[str, int]]) -> str:
    """Horizontal bars: problems each unsupported op blocks (most first)."""
    plt = pyplot()
    shown = blocked[:20]
    fig, ax = plt.subplots(figsize=(6, 0.6 + 0.3 * len(shown)))
    ax.barh([op for op, _ in shown], [n for _, n in shown], color=STATUS_COLORS["unsupported"])
    ax.invert_yaxis()
    ax.set_xlabel("problems blocked")
    _counts(ax.xaxis)
    ax.tick_params(axis="y", labelsize=8)
    return _png(fig)


def sol_png(rows: list[Row], arch: str) -> str:
    """Bound-only views on one GPU: SOL distribution, what bounds it, and eager bound / SOL."""
    plt = pyplot()
    ok = [r for r in rows if r.arch == arch and r.status == "ok" and r.bound_seconds(Level.FUSED)]
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.6))
    _hist_by_level(
        axes[0],
        [(r.level, r.bound_seconds(Level.FUSED)) for r in ok],
        "SOL (fused bound)",
        seconds_label,
    )
    axes[0].set_title(f"{arch}: speed of light")
    necks: dict[str, dict[int | None, int]] = {}
    for r in ok:
        neck = str((r.bounds or {})[Level.FUSED].get("bottleneck", "?"))
        necks.setdefault(neck, {}).setdefault(r.level, 0)
        necks[neck][r.level] += 1
    levels = sorted({r.level for r in ok}, key=lambda lv: (lv is None, lv or 0))
    bottom = [0] * len(levels)
    palette = {"compute": "#1565c0", "memory": "#ef6c00", "launch": "#757575"}
    for neck, per_level in sorted(necks.items()):
        heights = [per_level.get(lv, 0) for lv in levels]
        axes[1].bar(
            [_level_label(lv) for lv in levels],
            heights,
            bottom=bottom,
            label=neck,
            color=palette.get(neck),
        )
        bottom = [a + b for a, b in zip(bottom, heights)]
    axes[1].set_title("what bounds the SOL")
    axes[1].set_ylabel("problems")
    _counts(axes[1].yaxis)
    if necks:
        axes[1].legend(fontsize=8)
    gain = [
        (r.level, r.bound_seconds(Level.UNFUSED) / r.bound_seconds(Level.FUSED))
        for r in ok
        if r.bound_seconds(Level.UNFUSED)
    ]
    _hist_by_level(axes[2], gain, "unfused bound / fused bound")
    axes[2].set_title("eager bound over SOL (fusion gain)")
    fig.tight_layout()
    return _png(fig)


def headroom_png(entries: list[Entry], variant: str, levels: tuple[str, ...], arch: str) -> str:
    """One histogram of measured / bound per bound level, problems coloured by level; the line at 1
    is the bound itself (anything left of it is a violation)."""
    plt = pyplot()
    shown = [lvl for lvl in levels if claims(lvl, variant)]
    cols = min(len(shown), HEADROOM_COLUMNS)
    lines = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(lines, cols, figsize=(5 * cols, 3.4 * lines), squeeze=False)
    for ax in axes.flat[len(shown) :]:
        ax.set_visible(False)
    for ax, level in zip(axes.flat, shown):
        pairs = [
            (e.row.level, h)
            for e in entries
            if e.row.arch == arch and (h := e.headroom(variant, level)) is not None
        ]
        _hist_by_level(ax, pairs, f"measured {variant} / {title(level)} bound")
        if pairs:
            ax.axvline(1.0, color="#c62828", linestyle="--", linewidth=1)
        ax.set_title(f"{arch}: headroom over the {title(level)} bound")
    fig.tight_layout()
    return _png(fig)


def roofline_png(rows: list[Row], entries: list[Entry], spec: Any, variant: str | None) -> str:
    """Arithmetic intensity (FLOP per compulsory DRAM byte) vs throughput: hollow marks at the SOL,
    filled marks at the measured time (joined by a line), under the GPU's roofs."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 5.5))
    by_key = {e.row.key: e for e in entries}
    xs: list[float] = []
    ys: list[float] = []
    for r in rows:
        flops, dram, sol = r.total("flops"), r.total("dram_bytes"), r.bound_seconds(Level.FUSED)
        if r.arch != spec.name or r.status != "ok" or not flops or not dram or not sol:
            continue
        x, y_sol = flops / dram, flops / sol
        color = _level_color(r.level)
        ax.scatter([x], [y_sol], facecolors="none", edgecolors=color, s=30, zorder=3)
        xs.append(x)
        ys.append(y_sol)
        measured = by_key[r.key].seconds(variant) if variant and r.key in by_key else None
        if measured:
            ax.scatter([x], [flops / measured], color=color, s=22, zorder=3)
            ax.plot([x, x], [flops / measured, y_sol], color=color, linewidth=0.7, alpha=0.6)
            ys.append(flops / measured)
    bw = spec.dram_bytes_per_s
    peaks = [("fp32 SIMT", spec.simt_rate("fp32"))]
    peaks += [(f"{k} tensor", spec.tensor_rate(k)) for k in ("tf32", "bf16", "fp8", "fp4")]
    peaks = [(name, rate) for name, rate in peaks if rate]
    top = max(rate for _, rate in peaks)
    x_lo = min(xs + [top / bw]) / 10 if xs else 1e-2
    x_hi = max(xs + [top / bw]) * 10 if xs else 1e4
    ax.plot(
        [x_lo, top / bw],
        [bw * x_lo, top],
        color="black",
        linewidth=1.2,
        label=f"DRAM {bw / 1e12:.2f} TB/s",
    )
    for name, rate in peaks:
        ax.plot(
            [rate / bw, x_hi],
            [rate, rate],
            color="black",
            linewidth=0.8,
            linestyle="-" if name == "fp32 SIMT" else ":",
        )
        ax.text(x_hi, rate, f" {name} {rate / 1e12:.0f} TFLOP/s", fontsize=8, va="center")
    for level in sorted(
        {r.level for r in rows if r.arch == spec.name}, key=lambda lv: (lv is None, lv or 0)
    ):
        ax.scatter([], [], color=_level_color(level), label=_level_label(level))
    ax.scatter([], [], facecolors="none", edgecolors="black", label="at SOL (fused bound)")
    if variant:
        ax.scatter([], [], color="black", label=f"measured ({variant})")
    log_axes(ax, "xy")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(min(ys + [bw * x_lo]) / 2, top * 3)
    ax.set_xlabel("arithmetic intensity, FLOP per compulsory DRAM byte")
    ax.set_ylabel("throughput, FLOP/s")
    ax.set_title(f"roofline on {spec.name}")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, which="major", alpha=0.3)
    return _png(fig)
