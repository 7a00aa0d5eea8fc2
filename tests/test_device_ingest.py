"""benchmarks/device_ingest.py files one device call's results under the next free names of a host
folder, renames the sweep rows' runs with their dispatch files, splits the timings by suite, and
never overwrites."""

from __future__ import annotations

import json

import pytest

from benchmarks.device_ingest import main
from benchmarks.rows import read_rows


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def call(tmp_path):
    """A device call's $OUT (RUN=12: dispatch, floors, graphed) and a host folder that already holds
    earlier starts' files."""
    out, host = tmp_path / "out", tmp_path / "results" / "h100"
    out.mkdir()
    host.mkdir(parents=True)
    for k in (1, 2, 3):
        (out / f"dispatch_run12_{k}.json").write_text(json.dumps({"k": k}))
    _jsonl(out / "dispatch_shapes_start12.jsonl", [{"op": "cat", "run": f"dispatch_run12_{k}"} for k in (1, 2, 3)])
    (out / "floors_run12.json").write_text("{}")
    (out / "eager_host_cal12.json").write_text("{}")
    (out / "host_start12.txt").write_text("lscpu")
    _jsonl(out / "graphed.jsonl", [{"problem": p} for p in
                                   ("dispatch/a.py", "dispatch/b_b1.py", "models/m.py", "level3/1_MLP.py", "llama3_8b:decode")])
    for name in ("dispatch_run1.json", "dispatch_run2.json", "floors_run1.json", "dispatch_sync_start.jsonl",
                 "dispatch_sync_start_run2.jsonl", "kernelbench_level3_sync_start.jsonl"):
        (host / name).write_text("")
    return out, host


def test_files_land_under_the_next_free_names(call):
    out, host = call
    assert main([str(out), "h100", "--run", "12", "--results", str(host.parent)]) == 0
    assert [json.loads((host / f"dispatch_run{n}.json").read_text())["k"] for n in (3, 4, 5)] == [1, 2, 3]
    assert [r["run"] for r in read_rows(host / "dispatch_shapes_start12.jsonl")] == ["dispatch_run3", "dispatch_run4", "dispatch_run5"]
    assert (host / "floors_run2.json").is_file() and (host / "eager_host_cal1.json").is_file()
    assert (host / "host_start12.txt").read_text() == "lscpu"
    assert [r["problem"] for r in read_rows(host / "dispatch_sync_start_run3.jsonl")] == ["dispatch/a.py", "dispatch/b_b1.py"]
    assert [r["problem"] for r in read_rows(host / "models_sync_start.jsonl")] == ["models/m.py"]
    assert [r["problem"] for r in read_rows(host / "kernelbench_level3_sync_start_run2.jsonl")] == ["level3/1_MLP.py"]
    assert [r["problem"] for r in read_rows(host / "hf_timed_sync_start.jsonl")] == ["llama3_8b:decode"]


def test_dry_run_writes_nothing(call, capsys):
    out, host = call
    before = sorted(p.name for p in host.iterdir())
    assert main([str(out), "h100", "--run", "12", "--results", str(host.parent), "--dry-run"]) == 0
    assert sorted(p.name for p in host.iterdir()) == before
    assert "3 rows -> " in capsys.readouterr().out


def test_a_start_filed_twice_is_refused(call, capsys):
    """One line, exit 2, and nothing written."""
    out, host = call
    (host / "host_start12.txt").write_text("")
    before = sorted(p.name for p in host.iterdir())
    assert main([str(out), "h100", "--run", "12", "--results", str(host.parent)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("device_ingest: ") and "host_start12.txt exists" in err and err.count("\n") == 1
    assert sorted(p.name for p in host.iterdir()) == before


@pytest.mark.parametrize("args", [["missing", "h100", "--run", "1"], ["empty", "h100", "--run", "12"], ["out", "h200", "--run", "12"]])
def test_nothing_to_file_is_one_line(call, tmp_path, monkeypatch, args, capsys):
    """No such output folder, an output folder holding nothing of the run, no such host folder."""
    out, host = call
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main([*args, "--results", str(host.parent)]) == 2
    assert capsys.readouterr().err.startswith("device_ingest: ")
