"""The report files: summary.json, results.csv and a self-contained report.html."""

from __future__ import annotations

import base64
import csv
import io
import json
import re

import pytest

from solar.backends.levels import LEVELS, Level
from solar.kernelbench.measured import MeasuredFile, Measurement
from solar.kernelbench.report import write_report
from solar.kernelbench.summary import Context
from tests.kernelbench.helpers import make_row
from tests.report.pages import check_page, read_page, text_of

ROWS = [
    make_row("level1/1_A.py", "H100-SXM", fused=1e-3, unfused=2e-3, flops=4e9, dram_bytes=1e6),
    make_row("level1/1_A.py", "H200-SXM", fused=8e-4, unfused=1.5e-3, flops=4e9, dram_bytes=1e6),
    make_row("level1/2_B.py", "H100-SXM", fused=1e-5, unfused=3e-5, flops=1e6, dram_bytes=4e6),
    make_row("level1/2_B.py", "H200-SXM", fused=8e-6, unfused=2e-5, flops=1e6, dram_bytes=4e6),
    make_row(
        "level2/1_C.py",
        "H100-SXM",
        status="unsupported",
        op="aten.cumsum.default",
        error="unsupported op aten.cumsum.default",
        level=2,
    ),
    make_row(
        "level2/1_C.py",
        "H200-SXM",
        status="unsupported",
        op="aten.cumsum.default",
        error="unsupported op aten.cumsum.default",
        level=2,
    ),
    make_row(
        "level2/2_D.py",
        "H100-SXM",
        status="timeout",
        error="no result within the 5 s timeout",
        level=2,
    ),
    make_row(
        "level2/2_D.py",
        "H200-SXM",
        status="error",
        error="the worker was killed by SIGSEGV <boom>",
        level=2,
    ),
]


def _measured(*times):
    ms = tuple(Measurement(p, a, v, s, "t.json") for p, a, v, s in times)
    return (MeasuredFile("t.json", "solar-validate", ms, ()),)


def _report(tmp_path, measured=()):
    ctx = Context(
        root="suite",
        archs=("H100-SXM", "H200-SXM"),
        flags=(),
        wall_seconds=3.0,
        jobs=2,
        launched=4,
        skipped=0,
        measured_files=measured,
    )
    return write_report(tmp_path, ctx, ROWS)


def _images(html):
    return re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)


def _check_self_contained(html):
    check_page(html)  # nothing from outside, every table's rows as wide as its header
    images = _images(html)
    assert images and all(
        base64.b64decode(b, validate=True).startswith(b"\x89PNG\r\n\x1a\n") for b in images
    )
    return images


def test_bound_only_report(tmp_path):
    written = _report(tmp_path)
    html = written.html.read_text()
    for section in (
        "coverage",
        "unsupported",
        "failures",
        "sol",
        "roofline",
        "problems",
        "violations",
    ):
        assert f"id='{section}'" in html
    assert "No measured times were given" in html and "VIOLATION" not in html
    assert (
        len(_check_self_contained(html)) == 6
    )  # coverage, unsupported ops, SOL and roofline per GPU
    assert "&lt;boom&gt;" in html and "<boom>" not in html  # messages are escaped
    summary = json.loads(written.summary.read_text())
    assert summary["coverage"] == {
        "level1": {"ok": 2, "unsupported": 0, "error": 0, "timeout": 0, "total": 2},
        "level2": {"ok": 0, "unsupported": 1, "error": 0, "timeout": 1, "total": 2},
    }
    assert summary["arch_dependent_status"] == ["level2/2_D.py"]
    assert summary["unsupported_ops"] == [
        {"op": "aten.cumsum.default", "problems": 1, "examples": ["level2/1_C.py"]}
    ]
    assert summary["measured"] is None and summary["violations"] == [] and summary["headroom"] == []


def test_report_with_measured_times_shows_headroom_and_violations(tmp_path):
    measured = _measured(
        ("1_A.py", "H100-SXM", "eager", 3e-3),
        ("1_A.py", "H200-SXM", "eager", 2e-3),
        ("2_B.py", "H100-SXM", "eager", 5e-6),  # below the fused bound: a violation
    )
    written = _report(tmp_path, measured)
    html = written.html.read_text()
    assert "id='headroom'" in html and "No measured times were given" not in html
    assert "2 VIOLATION(S)" in html and "class='box bad'" in html
    assert len(_check_self_contained(html)) == 8  # + a headroom figure per GPU
    assert [(f.problem, f.violation.level) for f in written.joined.violations] == [
        ("level1/2_B.py", "fused"),
        ("level1/2_B.py", "unfused"),
    ]
    summary = json.loads(written.summary.read_text())
    h100 = {(s["bound"], s["level"]): s for s in summary["headroom"] if s["arch"] == "H100-SXM"}
    assert h100[("fused", 1)]["count"] == 2
    assert h100[("fused", 1)]["median"] == pytest.approx((3.0 + 0.5) / 2)
    assert h100[("fused", 1)]["geomean"] == pytest.approx((3.0 * 0.5) ** 0.5)
    assert summary["violations"][0]["ratio"] == pytest.approx(0.5)
    table = list(csv.DictReader(io.StringIO(written.csv.read_text())))
    assert len(table) == len(ROWS)
    first = table[0]
    assert first["problem"] == "level1/1_A.py" and float(
        first["headroom_eager_fused"]
    ) == pytest.approx(3.0)
    assert float(first["fused_seconds"]) == 1e-3 and float(first["measured_eager_seconds"]) == 3e-3
    assert table[4]["status"] == "unsupported" and table[4]["measured_eager_seconds"] == ""


def test_measured_times_for_failed_problems_only(tmp_path):
    rows = [
        make_row("level1/1_A.py", arch, status="error", error="boom")
        for arch in ("H100-SXM", "H200-SXM")
    ]
    ctx = Context(
        root="suite",
        archs=("H100-SXM", "H200-SXM"),
        flags=(),
        measured_files=_measured(("1_A.py", "H200-SXM", "eager", 1e-3)),
    )
    written = write_report(tmp_path, ctx, rows)
    html = written.html.read_text()
    assert "None: every measured run" in html and "id='headroom'" in html
    assert (
        written.summary_data["measured"]["matched_rows"] == 1
        and written.summary_data["headroom"] == []
    )


def test_log_bins_treat_rounding_as_equal():
    from solar.kernelbench.plots import _log_bins

    bins = _log_bins([1.0 - 1e-12, 3.0])
    assert bins[0] == 1.0 and bins[-1] >= 3.0 and len(bins) == 4
    assert _log_bins([2e-6, 5e-3])[0] == pytest.approx(10**-5.8)


def _op(name, seconds, einsum, contractions=()):
    return {
        "instance": None,
        "op": name,
        "source": "m.py:4: y = f(x)",
        "einsum": list(einsum),
        "flops": 10,
        "contraction_flops": 0,
        "dram_bytes": 64.0,
        "seconds": seconds,
        "bottleneck": "memory",
        "compute_seconds": 0.0,
        "memory_seconds": seconds,
        "binds": "dram",
        "contractions": list(contractions),
    }


FIX = {
    "kind": "fusion",
    "what": "fuse relu into mm",
    "seconds": 2e-4,
    "lo": "fused",
    "hi": "unfused",
}
SHARED = ("precision: exact", "cache: cold")


def _rich_rows():
    """Two problems on two GPUs with every level (given out of order), ops, a fix, assumptions."""
    more = {
        lvl.value: {
            "seconds": 1.5e-3,
            "bottleneck": "memory",
            "compute_seconds": 1e-4,
            "memory_seconds": 1.5e-3,
            "launch_seconds": 5e-7,
        }
        for lvl in (Level.EAGER_HOST, Level.GRAPHED, Level.LIBRARY, Level.CACHE_AWARE)
    }
    rows = []
    for problem in ("level1/1_A.py", "level1/2_B.py"):
        for arch in ("H100-SXM", "L4"):
            rows.append(
                make_row(
                    problem,
                    arch,
                    more_bounds=more,
                    op_count=3,
                    ops=(
                        _op("aten.mm.default", 9e-4, ["mm[i, j] += a[i, k] * b[k, j]"]),
                        _op("aten.relu.default", 1e-4, ["r[i] = max(x[i], 0)", "y[i] = r[i]"]),
                    ),
                    fixes=(FIX,),
                    assumptions=(*SHARED, f"cache-aware: S on {arch}", f"structure: {problem}"),
                )
            )
    return rows


def test_problem_table_is_a_tool_level_order_sortable_expandable(tmp_path):
    rows = _rich_rows()
    ctx = Context(root="suite", archs=("H100-SXM", "L4"), flags=())
    html = write_report(tmp_path, ctx, rows).html.read_text()
    page = check_page(html)
    (problems,) = [t for t in page.tables if "problems" in t.classes]
    assert "sortable" in problems.classes
    levels = [LEVELS[lv].title for lv in LEVELS if lv is not Level.RECURRENCE]
    assert problems.head == [
        "problem",
        "GPU",
        "status",
        "FLOPs",
        "DRAM bytes",
        *levels,
        "bottleneck",
        "binding unit",
        "top fix",
    ]
    firsts = problems.rows[0::2]  # each problem row, then its detail row
    assert [text_of(r[0]) for r in firsts] == [
        "level1/1_A.py",
        "level1/1_A.py",
        "level1/2_B.py",
        "level1/2_B.py",
    ]
    assert {(r[-3], r[-2]) for r in firsts} == {("compute", "–")}  # make_row records no unit
    assert all("fuse relu into mm" in r[-1] for r in firsts)
    assert page.details >= len(rows) + 1  # one per row, the two-line einsum, the one-problem lines
    # the detail rows hold each row's bounds (level order), slowest ops and fix
    inner_bounds = [t for t in page.tables if t.head[:2] == ["level", "time"]]
    assert len(inner_bounds) == len(rows)
    assert [r[0] for r in inner_bounds[0].rows] == levels
    inner_ops = [t for t in page.tables if t.head[:2] == ["#", "op"]]
    assert len(inner_ops) == len(rows) and [r[1] for r in inner_ops[0].rows] == [
        "aten.mm.default",
        "aten.relu.default",
    ]
    assert "The 2 slowest of 3 ops." in html
    # assumptions: each line once in the assumptions section, under who states it
    section = html[html.index("id='assumptions'") :]
    text = " ".join(read_page(section).text)
    for line in (
        *SHARED,
        "cache-aware: S on H100-SXM",
        "cache-aware: S on L4",
        "structure: level1/1_A.py",
    ):
        assert text.count(line) == 1, line
    assert "every problem on every GPU" in text and "every problem on L4" in text
    assert "level1/2_B.py on every GPU" in text


def test_rows_keep_the_slowest_ops_with_their_headline_and_the_first_fixes():
    from solar.kernelbench.results import ROW_FIXES, ROW_OPS, report_fields

    ops = [
        _op(
            f"aten.op{k}.default",
            k * 1e-6,
            ["x[i] = y[i]", f"z[i] += w[i, {k}]"],
            [f"z[i] += w[i, {k}]"],
        )
        for k in range(ROW_OPS + 5)
    ]
    fixes = [dict(FIX, seconds=s) for s in (3e-4, 2e-4, 1e-4, 5e-5)]
    fields = report_fields(
        {
            "arch": "L4",
            "totals": {},
            "bounds": {},
            "assumptions": ["a"],
            "ops": ops,
            "insights": {"gaps": [], "opportunities": fixes},
        }
    )
    assert fields["op_count"] == ROW_OPS + 5 and len(fields["ops"]) == ROW_OPS
    assert [o["op"] for o in fields["ops"]][:2] == [
        f"aten.op{ROW_OPS + 4}.default",
        f"aten.op{ROW_OPS + 3}.default",
    ]
    assert (
        fields["ops"][0]["einsum"] == [f"z[i] += w[i, {ROW_OPS + 4}]"]
        and fields["ops"][0]["contractions"] == []
    )
    assert list(fields["fixes"]) == fixes[:ROW_FIXES] and fields["assumptions"] == ("a",)
    row = make_row(
        "level1/1_A.py", **{k: v for k, v in fields.items() if k not in ("totals", "bounds")}
    )
    assert row.model_dump_json().count("aten.op") == ROW_OPS
    unread = report_fields({"arch": "L4", "ops": [{"op": "x", "new_field": 1}]})
    assert "ops" not in unread and "op_count" not in unread  # another version's ops: left out
