"""`solar kernelbench` as a command: flags, outputs, exit status, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

from solar.backends.levels import claims
from solar.kernelbench.cli import main
from tests.kernelbench.helpers import MATMUL, RELU, write_suite
from tests.report.pages import check_page


def test_run_with_a_fabricated_measured_file_reports_the_violation(tmp_path, capsys):
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU, "level1/2_Matmul.py": MATMUL})
    measured = tmp_path / "validate.jsonl"
    records = [
        {
            "problem": "level1/1_ReLU.py",
            "arch": "H200-SXM",
            "measured": {"eager": {"median_seconds": 1.0, "min_seconds": 0.9}},
        },
        {
            "problem": "2_Matmul.py",
            "arch": "H200-SXM",
            "measured": {"eager": {"median_seconds": 1e-12}},
        },
    ]
    measured.write_text("\n".join(json.dumps(r) for r in records))
    out = tmp_path / "out"
    argv = [
        str(root),
        "--arch",
        "H200",
        "--out",
        str(out),
        "--jobs",
        "2",
        "--measured",
        str(measured),
        "--precision",
        "fastest",
    ]
    assert main(argv) == 1  # a violation
    assert "VIOLATION(S)" in capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["flags"] == ["--precision", "fastest"]
    assert summary["coverage"]["level1"]["ok"] == 2 and summary["measured"]["matched_rows"] == 2
    violated = {(v["problem"], v["bound"]) for v in summary["violations"]}
    assert violated == {
        ("level1/2_Matmul.py", level) for level in summary["bound_levels"] if claims(level, "eager")
    }  # every bound that claims eager runs
    html = (out / "report.html").read_text()
    assert f"{len(violated)} VIOLATION(S)" in html
    page = check_page(html)  # the real report: every table as wide as its header
    (problems,) = [t for t in page.tables if "problems" in t.classes]
    assert [t.head[1] for t in page.tables if t.head[:2] == ["#", "op"]] == ["op", "op"]
    assert {"aten.matmul.default", "aten.relu.default"} <= {
        r[1] for t in page.tables if t.head[:2] == ["#", "op"] for r in t.rows
    }
    assert len(problems.rows) == 4  # two problems, each a row and its detail row
    assert (out / "results.csv").read_text().count("\n") == 3
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["flags"] == ["--precision", "fastest"] for r in rows)


def test_usage_errors_are_one_line_with_exit_2(tmp_path, capsys):
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU})
    assert main([str(root), "--arch", "V100", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("solar: error: unknown GPU 'V100'") and err.count("\n") == 1
    assert main([str(tmp_path / "nowhere"), "--arch", "H200", "--out", str(tmp_path / "o")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert (
        main(
            [
                str(root),
                "--arch",
                "H200",
                "--out",
                str(tmp_path / "o"),
                "--measured",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )
    assert "cannot read measured file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_module_entry_point():
    done = subprocess.run(
        [sys.executable, "-m", "solar.kernelbench", "--arch", "H200"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("solar: error: the following arguments are required: ROOT, --out")
