"""The single-model HTML page (`solar analyze --html`) and the pieces the suite report shares: bounds in
level order, sortable op tables whose rows are as wide as their headers, assumptions stated once
each with who states them, and the --html path checked before any analysis."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from solar.backends.levels import LEVELS, Level, title
from solar.cli import main
from solar.errors import UsageError
from solar.report.html import (
    check_html_path,
    describe_owners,
    group_assumptions,
    render_page,
    table,
    text,
)
from solar.report.insight import Insights, Opportunity
from solar.report.model import BoundReport, OpReport, Report, ServingReport, TotalsReport
from tests.report.pages import check_page, read_page, text_of

ROOT = Path(__file__).resolve().parents[2]


def _bound(seconds: float, bottleneck: str = "memory", unit: str | None = "fma") -> BoundReport:
    return BoundReport(
        seconds=seconds,
        bottleneck=bottleneck,
        compute_seconds=seconds / 2,
        memory_seconds=seconds,
        launch_seconds=5e-7,
        binding_unit=unit,
    )


def _op(name: str, seconds: float, einsum: list[str]) -> OpReport:
    return OpReport(
        instance=None,
        op=name,
        source="m.py:3: y = f(x)",
        einsum=einsum,
        flops=1000,
        contraction_flops=0,
        dram_bytes=4096.0,
        seconds=seconds,
        bottleneck="memory",
        compute_seconds=seconds / 10,
        memory_seconds=seconds,
        binds="dram",
    )


def _report(arch: str, assumptions: list[str], **extra) -> Report:
    # bounds given out of level order: the page puts them in order
    bounds = {
        Level.UNFUSED.value: _bound(3e-6),
        Level.CACHE_AWARE.value: _bound(2e-6),
        Level.FUSED.value: _bound(1e-6, "compute", "tensor bf16"),
    }
    fields = {"program": "Model", **extra}
    return Report(
        arch=arch,
        assumptions=assumptions,
        totals=TotalsReport(
            flops=2000,
            contraction_flops=0,
            dram_bytes=8192.0,
            unfused_dram_bytes=9000.0,
            arithmetic_intensity=0.25,
        ),
        bounds=bounds,
        ops=[
            _op("aten.relu.default", 1e-6, ["relu[i] = max(x[i], 0)"]),
            _op(
                "aten.addmm.default",
                2e-6,
                ["mm[i, j] += x[i, k] * w[j, k]", "out[i, j] = mm[i, j] + b[j]"],
            ),
        ],
        insights=Insights(
            gaps=[],
            opportunities=[
                Opportunity(
                    kind="fusion",
                    what="fuse relu into addmm",
                    seconds=1.5e-6,
                    lo=Level.FUSED.value,
                    hi=Level.UNFUSED.value,
                ),
            ],
        ),
        **fields,
    )


SHARED = ["precision: exact", "cache: cold"]


def test_single_model_page_has_every_part_per_gpu():
    reports = [
        _report("H100-SXM", [*SHARED, "cache-aware: S = 1 MB"]),
        _report("L4", [*SHARED, "cache-aware: S = 2 MB"]),
    ]
    html = render_page(reports)
    page = check_page(html)
    assert {"bounds", "gpu-H100-SXM", "gpu-L4", "assumptions"} <= set(page.ids)
    overview = page.tables[1]  # after the meta table
    order = [title(lv) for lv in (Level.FUSED, Level.CACHE_AWARE, Level.UNFUSED)]
    assert overview.head == ["GPU", *order, "bottleneck", "binding unit", "top fix"]
    assert [text_of(r[-3]) for r in overview.rows] == ["compute", "compute"]
    assert [text_of(r[-2]) for r in overview.rows] == ["tensor bf16", "tensor bf16"]
    assert "fuse relu into addmm" in overview.rows[0][-1]
    bounds = [t for t in page.tables if t.head and t.head[0] == "level"]
    assert [[r[0] for r in t.rows] for t in bounds] == [order, order]
    ops = [t for t in page.tables if t.head and t.head[:2] == ["#", "op"]]
    assert len(ops) == 2 and all("sortable" in t.classes for t in ops)
    assert [r[1] for r in ops[0].rows] == [
        "aten.addmm.default",
        "aten.relu.default",
    ]  # slowest first
    assert page.details == 2  # the two-line einsum, once per GPU
    text = " ".join(page.text)
    # each assumption once: the shared lines under both GPUs, each GPU's own under it
    assert all(
        text.count(line) == 1
        for line in (*SHARED, "cache-aware: S = 1 MB", "cache-aware: S = 2 MB")
    )
    assert "every GPU" in text and "fusion: fuse relu into addmm" in text


def test_an_hf_step_is_named_by_its_model_not_the_traced_class():
    step = ServingReport(
        model="tiny-llama",
        scenario="decode",
        batch=1,
        seq=1,
        context=8,
        layers=2,
        weight_bytes=10,
        kv_cache_bytes=2,
        per_layer={},
    )
    html = render_page([_report("H100-SXM", SHARED, program="_Step", serving=step)])
    assert "<title>solar: tiny-llama (decode)</title>" in html and "_Step" not in html


@pytest.mark.parametrize(
    "owners, expected",
    [
        ([("a", "H100"), ("b", "H100"), ("a", "L4"), ("b", "L4")], "every problem on every GPU"),
        ([("a", "L4"), ("b", "L4")], "every problem on L4"),
        ([("a", "H100"), ("a", "L4")], "a on every GPU"),
        ([("a", "L4")], "a on L4"),
        ([("a", "H100"), ("b", "L4")], "2 problem–GPU pairs: a on H100, b on L4"),
    ],
)
def test_who_states_an_assumption(owners, expected):
    everyone = [("a", "H100"), ("b", "H100"), ("a", "L4"), ("b", "L4")]
    assert describe_owners(owners, everyone, "problem") == expected


def test_describe_owners_of_one_program_names_only_gpus():
    everyone = [("m", "H100"), ("m", "L4")]
    assert describe_owners(everyone, everyone, "program") == "every GPU"
    assert describe_owners([("m", "L4")], everyone, "program") == "L4"


def test_assumptions_are_grouped_by_who_states_them_each_line_once():
    stated = {
        ("a", "H100"): ["x", "y", "h"],
        ("b", "H100"): ["x", "y", "h", "only b"],
        ("a", "L4"): ["x", "y", "l"],
        ("b", "L4"): ["x", "y", "l", "only b"],
    }
    groups = group_assumptions(stated)
    assert [(g.lines, g.owners) for g in groups] == [
        (("x", "y"), tuple(stated)),
        (("h",), (("a", "H100"), ("b", "H100"))),
        (("only b",), (("b", "H100"), ("b", "L4"))),
        (("l",), (("a", "L4"), ("b", "L4"))),
    ]
    assert len({g.ident for g in groups}) == len(groups)


def test_table_rows_are_as_wide_as_the_header_and_escaped():
    html = table(("a", "b"), [("<x>", text("y"))], sortable=True, details=["<p>more</p>"])
    (t,) = read_page(html).tables
    assert t.head == ["a", "b"] and t.widths == [2, 2] and t.rows[0][0] == "<x>"
    assert "&lt;x&gt;" in html and "colspan='2'" in html and 'class="sortable"' in html


def test_check_html_path(tmp_path):
    ok = str(tmp_path / "out.html")
    assert check_html_path(ok) == ok
    (tmp_path / "d.html").mkdir()
    for path, message in (
        (str(tmp_path / "out.txt"), "name an .html file"),
        (str(tmp_path / "no" / "out.html"), "does not exist"),
        (str(tmp_path / "d.html"), "is a directory"),
    ):
        with pytest.raises(UsageError, match=message):
            check_html_path(path)


def test_analyze_html_writes_one_page_with_a_section_per_gpu(tmp_path, monkeypatch, capsys):
    out = tmp_path / "mlp.html"
    monkeypatch.chdir(ROOT)
    assert main(["analyze", "examples/mlp.py", "--arch", "H100-SXM", "L4", "--html", str(out)]) == 0
    assert "H100-SXM" in capsys.readouterr().out  # the text report is printed as before
    page = check_page(out.read_text(encoding="utf-8"))
    assert {"gpu-H100-SXM", "gpu-L4"} <= set(page.ids) and page.details >= 2
    overview = page.tables[1]
    titles = [LEVELS[lv].title for lv in LEVELS]
    levels = [h for h in overview.head if h in titles]
    assert len(levels) >= 4 and levels == [t for t in titles if t in levels]


@pytest.mark.parametrize(
    "name, message", [("no/out.html", "does not exist"), ("out.txt", "name an .html file")]
)
def test_analyze_html_bad_path_is_one_line_before_the_analysis(tmp_path, name, message):
    code = (
        "import sys\n"
        "from solar.cli import main\n"
        f"rc = main(['analyze', 'examples/mlp.py', '--html', {str(tmp_path / name)!r}])\n"
        "print(rc, 'torch' in sys.modules)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert run.stdout.split() == ["2", "False"]
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("solar: error: argument --html:") and message in line
    assert not (tmp_path / name).exists()


def test_measured_ops_get_a_sortable_table_and_their_violations():
    from solar.report.measured_ops import MeasuredOp, MeasuredOps

    mo = MeasuredOps(
        problem="m.py",
        arch="H100-SXM",
        matched=2,
        unmatched_measured=0,
        unmatched_calls=0,
        measured_seconds=4e-6,
        unattributed_seconds=0.0,
        unattributed_bound_seconds=0.0,
        violations=["aten.relu.default #1 ran below its bound"],
        ops=[
            MeasuredOp(
                index=0,
                profiled_index=0,
                op="aten.addmm.default",
                kernels=1,
                measured_seconds=3e-6,
                bound_seconds=2e-6,
                lost_seconds=1e-6,
            ),
            MeasuredOp(
                index=1,
                profiled_index=1,
                op="aten.relu.default",
                kernels=1,
                measured_seconds=5e-7,
                bound_seconds=1e-6,
                lost_seconds=-5e-7,
            ),
        ],
    )
    page = check_page(render_page([_report("H100-SXM", SHARED, measured_ops=mo)]))
    (measured,) = [t for t in page.tables if t.head[:2] == ["op", "module / source"]]
    assert "sortable" in measured.classes
    assert [r[0] for r in measured.rows] == ["aten.addmm.default #0", "aten.relu.default #1"]
    assert "ran below its bound" in " ".join(page.text)


def test_analyze_html_with_symbolic_is_one_line(capsys):
    assert main(["analyze", "examples/mlp.py", "--symbolic", "batch=B", "--html", "x.html"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == "solar: error: --html writes the numeric report; drop --symbolic or --html"
