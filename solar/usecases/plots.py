"""Plots of the use cases, written to a file (.svg, .png or .pdf, by its suffix) with matplotlib's
Agg backend: the program on every GPU's roofline (`roofline`), and the provisioning plane of DRAM
bandwidth against compute (`provision_plane`)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from solar.backends.levels import Level
from solar.errors import UsageError
from solar.userfiles import check_writable
from solar.report.units import fmt_seconds

FORMATS = (".svg", ".png", ".pdf")


def check_plot_path(path: str) -> str:
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise UsageError(f"--plot {path!r}: name a .svg, .png or .pdf file")
    if not p.parent.is_dir():
        raise UsageError(f"--plot {path!r}: folder {str(p.parent)!r} does not exist")
    check_writable(path, "--plot", UsageError)
    return path


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def log_axes(ax: Any, which: str = "xy", label: Any = None) -> None:
    """Log axes (`which` of x, y) without minor ticks (mathtext labels and minor tick objects cost
    seconds per figure), their ticks labelled in plain text by `label` (value -> text; default
    log_label); the ticks themselves are set from the final limits by log_ticks."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    for name in which:
        getattr(ax, f"set_{name}scale")("log")
        axis = getattr(ax, f"{name}axis")
        axis.set_minor_locator(NullLocator())
        axis.set_major_formatter(FuncFormatter(lambda v, _pos: (label or log_label)(v)))


def log_tick_values(lo: float, hi: float) -> list[float]:
    """Ticks for a log axis from `lo` to `hi`: powers of ten (every k-th one when there are many),
    also 2 and 5 times them when the range spans few decades, and at least two ticks always."""
    import numpy as np

    decades = math.log10(hi / lo)
    subs = (1.0, 2.0, 5.0) if decades < 2.5 else (1.0,)
    step = max(1, math.ceil(decades / 8))
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks = [
        m * 10.0**e for e in range(first, last + 1) if e % step == 0 for m in subs
        if lo <= m * 10.0**e <= hi * (1 + 1e-9)
    ]
    if len(ticks) < 2:  # less than a factor of about 2.5: evenly spaced values
        from matplotlib.ticker import MaxNLocator

        even = MaxNLocator(4, steps=[1, 2, 5, 10]).tick_values(lo, hi)
        ticks = [float(t) for t in even if lo <= t <= hi and t > 0]
    return [float(t) for t in np.unique(ticks)]


def log_label(value: float) -> str:
    """A tick label in plain text: `0.002`, `50`, `2e-05`, `1e12`."""
    if 1e-3 <= abs(value) < 1e4:
        return f"{value:g}"
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def seconds_label(value: float) -> str:
    """A tick label of a time axis: `10 µs`, `2 ms`, `1 s`."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value >= scale * (1 - 1e-9):
            return f"{value / scale:.3g} {unit}"
    return f"{value * 1e9:.3g} ns"


def log_ticks(fig: Any) -> None:
    """Major ticks on every log axis of `fig`, from its final limits."""
    from matplotlib.ticker import FixedLocator

    for ax in fig.axes:
        for axis, scale, limits in (
            (ax.xaxis, ax.get_xscale(), ax.get_xlim()),
            (ax.yaxis, ax.get_yscale(), ax.get_ylim()),
        ):
            lo, hi = sorted(limits)
            if scale != "log" or not lo > 0:
                continue
            axis.set_major_locator(FixedLocator(log_tick_values(lo, hi)))


def _save(fig: Any, path: str) -> None:
    log_ticks(fig)
    fig.savefig(
        path,
        dpi=110,
        bbox_inches="tight",
        metadata={"Date": None} if path.endswith(".svg") else None,
    )
    pyplot().close(fig)


def roofline(comparison: Any, path: str) -> None:
    """One roofline per GPU, for THIS program's work mix: attainable FLOP/s = min(flops / compute
    term, DRAM bandwidth × intensity); the program sits at its compulsory intensity (filled) and at
    its cache-aware intensity (hollow) with the height flops / bound. A launch-bound program sits
    below its roof."""
    plt = pyplot()
    check_plot_path(path)
    fig, ax = plt.subplots(figsize=(8, 5.2))
    flops = comparison.flops
    ai = flops / comparison.dram_bytes if comparison.dram_bytes else None
    ai_ca = flops / comparison.cache_aware_dram_bytes if comparison.cache_aware_dram_bytes else None
    xs = [x for x in (ai, ai_ca) if x]
    lo, hi = (min(xs) / 100, max(xs) * 100) if xs else (0.1, 1e4)
    colors = plt.get_cmap("tab10")
    for k, row in enumerate(comparison.rows):
        color = colors(k % 10)
        fused = row.levels[Level.FUSED]
        bw = row.dram_bytes_per_s
        peak = flops / fused.compute_seconds if fused.compute_seconds else None
        grid = [lo * (hi / lo) ** (t / 200) for t in range(201)]
        roof = [min(bw * x, peak) if peak else bw * x for x in grid]
        ax.plot(
            grid,
            roof,
            color=color,
            linewidth=1.6,
            label=f"{row.arch} ({fused.binds}, {fmt_seconds(fused.seconds)})",
        )
        if ai and fused.seconds:
            ax.plot([ai], [flops / fused.seconds], "o", color=color, markersize=7)
        ca = row.levels.get(Level.CACHE_AWARE)
        if ai_ca and ca and ca.seconds:
            ax.plot(
                [ai_ca],
                [flops / ca.seconds],
                "o",
                color=color,
                markersize=9,
                markerfacecolor="none",
            )
    log_axes(ax)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("attainable FLOP/s for this program's work mix")
    ax.set_title(f"{comparison.program}: roofline per GPU (filled: fused SOL, hollow: cache-aware)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    _save(fig, path)


def provision_plane(prov: Any, path: str) -> None:
    """The (DRAM bandwidth, compute scale) plane of a provisioning: the region where the chosen
    level meets the target (a corner: its terms are a max), the eager (unfused) frontier (a curve:
    its per-kernel terms add), and every existing spec at its bandwidth and at the compute scale
    that gives this program its compute term there."""
    plt = pyplot()
    check_plot_path(path)
    curve = prov.dispatch_curve
    if curve:
        fig, (ax, hx) = plt.subplots(1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [8, 5]})
        _dispatch_axes(hx, prov)
    else:
        fig, ax = plt.subplots(figsize=(8, 5.2))
    pts = [p for p in prov.frontier if p.bandwidth_bytes_per_s and p.compute_scale]
    eager = [p for p in prov.unfused_frontier if p.bandwidth_bytes_per_s and p.compute_scale]
    specs = [s for s in prov.specs if s.compute_scale]
    bws = [p.bandwidth_bytes_per_s for p in (*pts, *eager)] + [s.dram_bytes_per_s for s in specs]
    cs = [p.compute_scale for p in (*pts, *eager)] + [s.compute_scale for s in specs]
    x0, x1 = min(bws) / 3, max(bws) * 3
    y0, y1 = min(cs) / 3, max(cs) * 3
    if pts:
        bw, c = pts[0].bandwidth_bytes_per_s, pts[0].compute_scale
        ax.fill_between(
            [bw, x1],
            [c, c],
            [y1, y1],
            color="#2e7d32",
            alpha=0.15,
            label=f"{prov.level} bound <= target: BW >= {bw / 1e9:.4g} GB/s, compute >= {c:.3g}x",
        )
        ax.plot([bw], [c], "s", color="#2e7d32")
    if eager:
        ax.plot(
            [p.bandwidth_bytes_per_s for p in eager],
            [p.compute_scale for p in eager],
            "-",
            color="#c62828",
            linewidth=1.5,
            label="unfused (eager) bound = target",
        )
    marks = []
    for s in sorted(specs, key=lambda v: (v.dram_bytes_per_s, v.compute_scale)):
        color = "#2e7d32" if s.meets else "#555555"
        ax.plot([s.dram_bytes_per_s], [s.compute_scale], "o", color=color)
        marks.append((s.dram_bytes_per_s, s.compute_scale, s.arch, color))
    log_axes(ax)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_xlabel("DRAM bandwidth (bytes/s)")
    ax.set_ylabel(f"compute rates (x {prov.like}'s, all units)")
    ax.set_title(f"{prov.program}: what meets {fmt_seconds(prov.target_seconds)} (green points meet it)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    label_points(ax, marks)
    _save(fig, path)


# Where a point's label may go, in points from the point: beside it, then further up or down
# (a leader line joins a label set apart from its point).
_LABEL_OFFSETS = tuple(
    (dx, dy) for dy in (2, -10, 12, -20, 22, -30, 34, -42, 46, -54) for dx in (6, -6)
)


def label_points(ax: Any, marks: list[tuple[float, float, str, str]]) -> None:
    """Name each point (x, y, text, color) where its label overlaps no other label, no point, no
    legend and stays inside the axes, trying the places of _LABEL_OFFSETS in turn (the least
    overlapping one when none is free)."""
    fig = ax.figure
    log_ticks(fig)  # the final ticks first: their labels move the axes
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    legend = ax.get_legend()
    taken = [legend.get_window_extent(renderer)] if legend is not None else []
    points = [ax.transData.transform((x, y)) for x, y, _, _ in marks]
    # a point keeps the space above and below it free: a label there would seem to name it
    dots = [(px - 6, py - 16, px + 6, py + 16) for px, py in points]
    for line in ax.get_lines():  # curves too: a label should not sit on one
        xy = ax.transData.transform(line.get_xydata())
        for (x0, y0), (x1, y1) in itertools.pairwise(xy):
            n = max(1, math.ceil(math.hypot(x1 - x0, y1 - y0) / 4))
            for t in range(n + 1):
                cx, cy = x0 + (x1 - x0) * t / n, y0 + (y1 - y0) * t / n
                dots.append((cx - 1.5, cy - 1.5, cx + 1.5, cy + 1.5))

    def cost(box: Any) -> float:
        area = 0.0
        for x0, y0, x1, y1 in [*((b.x0, b.y0, b.x1, b.y1) for b in taken), *dots]:
            w = min(box.x1, x1) - max(box.x0, x0)
            h = min(box.y1, y1) - max(box.y0, y0)
            area += max(w, 0) * max(h, 0)
        inside = frame.contains(box.x0, box.y0) and frame.contains(box.x1, box.y1)
        return area + (0.0 if inside else box.width * box.height)

    def label(x: float, y: float, name: str, color: str, dx: int, dy: int, lead: bool) -> Any:
        arrow = {"arrowstyle": "-", "color": color, "lw": 0.6, "shrinkB": 3} if lead else None
        return ax.annotate(
            name, (x, y), xytext=(dx, dy), textcoords="offset points", fontsize=8, color=color,
            ha="left" if dx > 0 else "right", arrowprops=arrow,
        )

    for x, y, name, color in marks:
        best = None
        for dx, dy in _LABEL_OFFSETS:
            text = label(x, y, name, color, dx, dy, lead=False)
            box = text.get_window_extent(renderer)
            c = cost(box)
            text.remove()
            if best is None or c < best[0]:
                best = (c, dx, dy, box)
            if c == 0:
                break
        _, dx, dy, box = best
        label(x, y, name, color, dx, dy, lead=abs(dy) >= 12)
        taken.append(box)


def _dispatch_axes(ax: Any, prov: Any) -> None:
    """The eager_host bound against one uniform host dispatch floor (exact polyline), the target,
    and the largest floor that meets it."""
    xs = [p.floor_seconds * 1e6 for p in prov.dispatch_curve]
    ys = [p.seconds * 1e6 for p in prov.dispatch_curve]
    ax.plot(xs, ys, "-", color="#1565c0", linewidth=1.5, label="eager_host bound (no head start)")
    ax.axhline(prov.target_seconds * 1e6, color="#c62828", linewidth=1, linestyle="--", label="target")
    need = prov.requirement("host dispatch floor (eager, uniform)")
    if need.value is not None:
        ax.plot([need.value * 1e6], [prov.target_seconds * 1e6], "o", color="#c62828")
        ax.annotate(f"largest floor {need.value * 1e6:.4g} us", (need.value * 1e6, prov.target_seconds * 1e6),
                    fontsize=8, xytext=(6, -12), textcoords="offset points")
    if need.like_value is not None:
        ax.axvline(need.like_value * 1e6, color="#555555", linewidth=1, linestyle=":",
                   label=f"{prov.like} calibrated kernel floor")
    ax.set_xlabel("host dispatch floor per kernel-launching op (us)")
    ax.set_ylabel("bound (us)")
    ax.set_title(f"eager: {prov.eager_ops} ATen ops, device stage {fmt_seconds(prov.eager_device_seconds or 0.0)}")
    ax.set_xlim(0, xs[-1])
    ax.set_ylim(0, max(*ys, prov.target_seconds * 1e6) * 1.05)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
