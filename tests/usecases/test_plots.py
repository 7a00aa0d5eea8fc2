"""The use-case plots are written and hold what they draw (a roofline per GPU, the provisioning plane)."""

from __future__ import annotations

import pytest

from solar.api import load
from solar.cli import main
from solar.usecases.compare import compare
from solar.usecases.plots import (
    label_points,
    log_label,
    log_tick_values,
    provision_plane,
    pyplot,
    roofline,
    seconds_label,
)
from solar.usecases.provision import provision_loaded
from tests.backends.test_cache_aware import softmax

ARCHS = ["L4", "A100-SXM4-80GB", "H100-SXM"]


@pytest.mark.parametrize("suffix", [".png"])
def test_roofline_file(tmp_path, suffix: str) -> None:
    out = tmp_path / f"roof{suffix}"
    roofline(compare(softmax(64, 4096), arch=ARCHS), str(out))
    data = out.read_bytes()
    assert len(data) > 10_000
    if suffix == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        text = data.decode()
        assert text.lstrip().startswith("<?xml") and all(a in text for a in ARCHS)


def test_provision_plane_and_cli_plots(tmp_path) -> None:
    out = tmp_path / "plane.png"
    p = provision_loaded(load(softmax(64, 4096)), 5e-5, "H100-SXM")
    provision_plane(p, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    f = tmp_path / "p.ir"
    f.write_text(str(softmax(64, 4096)))
    svg = tmp_path / "roof.svg"
    assert main(["analyze", str(f), "--arch", "L4", "H100-SXM", "--json", "--plot", str(svg)]) == 0
    assert "H100-SXM" in svg.read_text()


@pytest.mark.parametrize(
    "lo, hi, ticks",
    [
        (0.09, 6.0, [0.1, 0.2, 0.5, 1.0, 2.0, 5.0]),  # few decades: 1, 2, 5 per decade
        (2e-5, 5e-2, [1e-4, 1e-3, 1e-2]),  # several: powers of ten
        (1e-6, 1e10, [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6, 1e8, 1e10]),  # many: every other one
        (1.0, 1.6, [1.0, 1.2, 1.4, 1.6]),  # less than one step: evenly spaced, never one tick
    ],
)
def test_log_axes_get_more_than_one_tick(lo, hi, ticks):
    assert log_tick_values(lo, hi) == pytest.approx(ticks)
    assert [log_label(t) for t in (2e-5, 0.002, 50.0, 1e4, 1.5e12)] == [
        "2e-5",
        "0.002",
        "50",
        "1e4",
        "1.5e12",
    ]


def test_time_axes_are_labelled_in_time_units():
    assert [seconds_label(v) for v in (1e-5, 2e-4, 1e-3, 0.05, 2.0)] == [
        "10 µs",
        "200 µs",
        "1 ms",
        "50 ms",
        "2 s",
    ]


def test_point_labels_do_not_overlap_each_other_or_points():
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.2))
    ax.set_xscale("log")
    ax.set_yscale("log")
    marks = [
        (x, y, name, "#555555")
        for x, y, name in (
            (2.0e12, 1.0, "H100-PCIe"),
            (2.04e12, 1.0, "A100-SXM4-80GB"),
            (3.35e12, 1.0, "H100-SXM"),
            (4.8e12, 1.0, "H200-SXM"),
            (1.55e12, 0.3, "A100-PCIe-40GB"),
            (1.6e12, 0.31, "L4"),
        )
    ]
    for x, y, _, _ in marks:
        ax.plot([x], [y], "o")
    ax.set_xlim(5e11, 2e13)
    ax.set_ylim(0.1, 10)
    label_points(ax, marks)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert sorted(t.get_text() for t in ax.texts) == sorted(m[2] for m in marks)
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    points = [ax.transData.transform((x, y)) for x, y, _, _ in marks]
    assert not any(b.contains(px, py) for b in boxes for px, py in points)
    plt.close(fig)
