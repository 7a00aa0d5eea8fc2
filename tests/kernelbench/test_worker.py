"""Classifying a worker's outcome into rows (no processes started here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solar.errors import UsageError
from solar.kernelbench.problems import Problem
from solar.kernelbench.worker import classify, parse_reports
from solar.kernelbench.workerset import Outcome

PROBLEM = Problem("level1/1_A.py", 1, Path("level1/1_A.py"))
ARCHS = ("H100-SXM", "L4")


def _rows(returncode, stdout="", stderr="", timeout=10.0):
    return classify(
        PROBLEM,
        ARCHS,
        Outcome(returncode, stdout, stderr, 1.25),
        ("--precision", "fastest"),
        timeout,
    )


def _report(arch):
    return {
        "arch": arch,
        "totals": {"flops": 8, "dram_bytes": 16},
        "bounds": {"fused": {"seconds": 1e-6}},
        "assumptions": ["a"],
    }


def test_reports_become_ok_rows_one_per_gpu():
    rows = _rows(
        0, "noise printed by the model\n" + json.dumps([_report("H100-SXM"), _report("L4")])
    )
    assert [(r.arch, r.status, r.totals["flops"], r.seconds, r.flags) for r in rows] == [
        ("H100-SXM", "ok", 8, 1.25, ("--precision", "fastest")),
        ("L4", "ok", 8, 1.25, ("--precision", "fastest")),
    ]
    assert (
        rows[0].problem == "level1/1_A.py" and rows[0].level == 1 and rows[0].assumptions == ("a",)
    )


def test_a_missing_report_or_no_json_is_an_error_row():
    rows = _rows(0, json.dumps(_report("H100-SXM")))
    assert [r.status for r in rows] == ["ok", "error"] and "no report for L4" in rows[1].error
    assert {r.status for r in _rows(0, "hello")} == {"error"}
    with pytest.raises(ValueError, match="no JSON"):
        parse_reports("")


def test_unsupported_op_is_extracted_from_solars_one_line_error():
    stderr = "warning: something\nsolar: error: unsupported op aten.cumsum.default at m.py:6: y; solar has no lowering\n"
    rows = _rows(2, stderr=stderr)
    assert {(r.status, r.op, r.exit_code) for r in rows} == {
        ("unsupported", "aten.cumsum.default", 2)
    }
    assert rows[0].error.startswith("unsupported op aten.cumsum.default at m.py:6")


@pytest.mark.parametrize(
    ("returncode", "stderr", "status", "text"),
    [
        (2, "solar: error: m.py: no such file; pass a path\n", "error", "m.py: no such file"),
        (
            1,
            "Traceback (most recent call last):\n  ...\nRuntimeError: boom\n",
            "error",
            "status 1: RuntimeError: boom",
        ),
        (-11, "", "error", "killed by SIGSEGV"),
        (3, "", "error", "status 3 and printed nothing"),
        (None, "", "timeout", "10 s timeout"),
    ],
)
def test_failures_are_one_line(returncode, stderr, status, text):
    rows = _rows(returncode, stderr=stderr)
    assert {r.status for r in rows} == {status}
    assert text in rows[0].error and "\n" not in rows[0].error and rows[0].op is None


def test_a_rejected_flag_aborts_instead_of_failing_every_problem():
    stderr = "solar: error: unrecognized arguments: --mode x (see `solar analyze --help`)\n"
    with pytest.raises(UsageError, match="unrecognized arguments: --mode x"):
        _rows(2, stderr=stderr)
