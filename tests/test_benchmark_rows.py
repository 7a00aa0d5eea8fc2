"""benchmarks/rows.py and benchmarks/measure_files.write_rows, the shared readers and writers of
the H200 JSON-lines results: rows read back as written (blank lines skipped, a missing file
optional), the oracle check's lines, a failed case's one-line error, and the measurement loop's
rows (problem name, extra fields, the time budget, the environment) with a stand-in GPU."""

from __future__ import annotations

import json
import math

import pytest

import solar.validate.device
from benchmarks.measure_files import file_name, write_rows
from benchmarks.rows import RESULTS, beaten, error_line, read_rows


def test_read_rows_skips_blank_lines_and_may_miss(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"problem": "a"}\n\n  \n{"problem": "b", "x": [1]}\n')
    assert read_rows(path) == [{"problem": "a"}, {"problem": "b", "x": [1]}]
    assert read_rows(tmp_path / "none.jsonl", missing_ok=True) == []
    with pytest.raises(FileNotFoundError):
        read_rows(tmp_path / "none.jsonl")
    assert len(read_rows(RESULTS / "suite.jsonl")) >= 81


def test_beaten_names_each_level_above_a_mode_it_claims():
    measured = {"eager": {"min_seconds": 2e-6}, "compile": {"min_seconds": 1e-6}}
    # fused claims both modes, unfused eager only; a level LEVEL_MODES lacks claims none
    assert beaten({"fused": 1.5e-6, "unfused": 1.5e-6, "nolevel": 9.0}, measured) == [
        "compile/fused: bound 1.50 µs > measured 1.00 µs"
    ]
    assert beaten({"fused": 1e-6, "unfused": 2e-6}, measured) == []


def test_error_line_is_type_and_first_line():
    assert error_line(ValueError("bad shape\nmore")) == "ValueError: bad shape"
    assert error_line(RuntimeError("")) == "RuntimeError: "
    assert error_line(KeyError("x" * 400)) == ("KeyError: '" + "x" * 400)[:300]


def test_write_rows_appends_one_row_per_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(solar.validate.device, "environment", lambda: {"gpu": "Stand-in GPU"})
    out = tmp_path / "rows.jsonl"
    files = [tmp_path / "level1" / "1_A.py", tmp_path / "level2" / "2_B.py"]
    write_rows(files, out, math.inf, lambda p: {"measured": {"eager": {"min_seconds": len(p.name)}}},
               lambda p, row: (p.name, "ok"), file_name(2), protocol="sync_start")
    write_rows(files[:1], out, -math.inf, lambda p: pytest.fail("past the deadline"), lambda p, row: (p.name,),
               file_name(1))
    env = {"gpu": "Stand-in GPU"}
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"problem": "level1/1_A.py", "arch": "Stand-in GPU", "protocol": "sync_start",
         "measured": {"eager": {"min_seconds": 6}}, "environment": env},
        {"problem": "level2/2_B.py", "arch": "Stand-in GPU", "protocol": "sync_start",
         "measured": {"eager": {"min_seconds": 6}}, "environment": env},
        {"problem": "1_A.py", "arch": "Stand-in GPU", "skipped": "time budget", "environment": env},
    ]
    assert capsys.readouterr().out.splitlines() == ["1_A.py ok", "2_B.py ok", "1_A.py"]
