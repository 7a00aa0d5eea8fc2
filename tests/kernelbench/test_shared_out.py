"""Runs sharing one OUT: appends and compaction interleaved under the results lock lose no row, the
per-pair claims keep two runs off the same pair, unreadable lines are set aside with one line, a
full disk keeps the rows and says so in one line, and two real batches started at once on one OUT
(different GPUs) both keep every row."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from solar.kernelbench.cli import main
from solar.kernelbench.plan import RunConfig, Schedule, resolve_archs
from solar.kernelbench.problems import find_problems
from solar.kernelbench.results import BAD_FILE, RESULTS_FILE, RowWriter, compact, read_rows
from tests.kernelbench.helpers import MATMUL, RELU, make_row, write_suite

SUITE = {"level1/1_ReLU.py": RELU, "level1/2_Matmul.py": MATMUL, "level2/1_ReLU.py": RELU}


def test_a_writer_opened_before_a_compaction_appends_to_the_file_that_replaced_it(tmp_path):
    path = tmp_path / RESULTS_FILE
    first, second = RowWriter(path), RowWriter(path)  # two runs' writers, both open from the start
    first.write(make_row("level1/1_a.py", "H100-SXM"))
    second.write(make_row("level1/1_a.py", "B200"))
    compact(path)  # the first run ends: results.jsonl is replaced
    second.write(make_row("level1/2_b.py", "B200"))
    first.write(make_row("level1/2_b.py", "H100-SXM"))
    compact(path)  # the second run ends
    rows, bad = read_rows(path)
    assert bad == 0 and sorted(rows) == [
        ("level1/1_a.py", "B200"), ("level1/1_a.py", "H100-SXM"),
        ("level1/2_b.py", "B200"), ("level1/2_b.py", "H100-SXM"),
    ]


def test_unreadable_lines_are_moved_aside_and_counted_never_dropped(tmp_path):
    path = tmp_path / RESULTS_FILE
    garbage = [b"not json", b'{"problem": "cut off', bytes(range(1, 9))]
    path.write_bytes(b"\n".join([garbage[0], make_row("level1/1_a.py").model_dump_json().encode(), *garbage[1:]]))
    RowWriter(path).write(make_row("level1/2_b.py"))  # the line cut off is ended first
    done = compact(path)
    assert [r.problem for r in done.rows] == ["level1/1_a.py", "level1/2_b.py"]
    assert (tmp_path / BAD_FILE).read_bytes() == b"".join(line + b"\n" for line in garbage)
    assert done.note() == f"3 unreadable lines of {path} moved to {tmp_path / BAD_FILE}"
    assert read_rows(path)[1] == 0 and compact(path).note() is None  # moved once


def _config(root: Path, out: Path, archs: list[str], flags: tuple[str, ...] = ()) -> RunConfig:
    return RunConfig(problems=tuple(find_problems(root)), archs=resolve_archs(archs), out=out, flags=flags)


def test_two_runs_on_one_out_never_start_the_same_pair(tmp_path):
    root = write_suite(tmp_path / "suite", SUITE)
    out = tmp_path / "out"
    a_config, b_config = _config(root, out, ["H100-SXM"]), _config(root, out, ["H100-SXM", "B200"])
    a, b = Schedule(a_config), Schedule(b_config)
    try:
        first = a.next()
        assert (first.problem.rel, list(first.archs), first.last) == ("level1/1_ReLU.py", ["H100-SXM"], True)
        # b gets the first problem's other GPU only: a holds the pair (H100, 1_ReLU)
        mine = b.next()
        assert (mine.problem.rel, list(mine.archs), mine.last) == ("level1/1_ReLU.py", ["B200"], False)
        RowWriter(out / RESULTS_FILE).write(make_row("level1/1_ReLU.py", "H100-SXM"))
        a.done(first)
        RowWriter(out / RESULTS_FILE).write(make_row("level1/1_ReLU.py", "B200"))
        b.done(mine)
        starts = [(s.problem.rel, list(s.archs)) for s in iter(b.next, None)]
        # a's finished pair is looked up again once free: b does not redo it
        assert starts == [("level1/2_Matmul.py", ["H100-SXM", "B200"]), ("level2/1_ReLU.py", ["H100-SXM", "B200"])]
        assert b.taken_over == 1 and not b.waiting
        # a now finds b holding every pair it has left, and waits for them
        assert a.next() is None and a.waiting
        for s in starts:
            for arch in s[1]:
                RowWriter(out / RESULTS_FILE).write(make_row(s[0], arch))
        b.close()  # b's claims released: a finds the rows and has nothing left
        assert a.next() is None and not a.waiting and (a.taken_over, a.dropped) == (2, 2)
    finally:
        a.close()
        b.close()


def test_a_row_from_another_run_with_other_flags_does_not_count(tmp_path):
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU})
    out = tmp_path / "out"
    config = _config(root, out, ["H100-SXM"], flags=("--precision", "fastest"))
    schedule = Schedule(config)
    try:
        RowWriter(out / RESULTS_FILE).write(make_row("level1/1_ReLU.py", "H100-SXM"))  # flags ()
        start = schedule.next()
        assert start is not None and schedule.taken_over == 0
    finally:
        schedule.close()


def test_a_full_disk_keeps_the_rows_written_and_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    root = write_suite(tmp_path / "suite", SUITE)
    out = tmp_path / "out"
    real_write = os.write
    room = {"rows": 2}

    def write(fd, data):  # OUT's disk holds two rows, then is full
        target = os.readlink(f"/proc/self/fd/{fd}")
        if target.startswith(str(out)):
            if target.endswith(RESULTS_FILE) and room["rows"] > 0:
                room["rows"] -= 1
                return real_write(fd, data)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    code = main([str(root), "--arch", "H100-SXM", "--out", str(out), "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 2, err
    [line] = [x for x in err.splitlines() if x.startswith("solar: error:")]
    assert line == (
        f"solar: error: {out / RESULTS_FILE}: cannot write it: the disk is full; the 2 rows in "
        f"{out / RESULTS_FILE} are kept (free space, then run the same command again)"
    )
    assert "Traceback" not in err and len(read_rows(out / RESULTS_FILE)[0]) == 2
    assert not (out / "report.html").exists()


def test_a_full_disk_while_writing_the_report_leaves_no_part_of_it(tmp_path, capsys, monkeypatch):
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU})
    out = tmp_path / "out"
    real_write = os.write

    def write(fd, data):
        if "report.html" in os.readlink(f"/proc/self/fd/{fd}"):
            real_write(fd, bytes(data)[:100])  # a part is written, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    assert main([str(root), "--arch", "H100-SXM", "--out", str(out), "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        f"solar: error: {out / 'report.html'}: cannot write it: the disk is full; the 1 row in "
        f"{out / RESULTS_FILE} is kept (free space, then run the same command again)"
    )
    assert sorted(p.name for p in out.iterdir()) == [".locks", "results.csv", RESULTS_FILE, "summary.json"]


@pytest.mark.parametrize(
    ("archs", "launched"),
    [(("H100-SXM", "B200"), 6), (("H100-SXM", "H100-SXM"), 3)],
    ids=["other-gpus", "same-gpu"],
)
def test_two_batches_started_at_once_on_one_out_keep_every_row(tmp_path, archs, launched):
    root = write_suite(tmp_path / "suite", SUITE)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "solar.kernelbench", str(root), "--arch", arch, "--out", str(out), "--jobs", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for arch in archs
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    rows, bad = read_rows(out / RESULTS_FILE)
    assert bad == 0 and {(p, a): r.status for (p, a), r in rows.items()} == {
        (p, a): "ok" for p in SUITE for a in set(archs)
    }
    assert len((out / RESULTS_FILE).read_text().splitlines()) == len(rows)  # compacted
    # each problem was analysed once per run that asked for its GPU and did not find it done
    done = [re.search(r"analysed\s+(\d+)\s+problems", err) for _, err in outputs]
    assert sum(int(m.group(1)) for m in done) == launched, outputs
