"""End to end: real workers on tiny problems — statuses, crash isolation, timeouts, resumption."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from solar.errors import UsageError
from solar.kernelbench.measure import MEASURED_FILE, measure_suite, measured_problems
from solar.kernelbench.problems import find_problems
from solar.kernelbench.results import RESULTS_FILE, read_rows
from solar.kernelbench.plan import RunConfig, pending, resolve_archs
from solar.kernelbench.runner import run_analysis
from tests.kernelbench.helpers import EXIT3, FFT, MATMUL, RELU, SEGFAULT, SVD, sleeper, write_suite

ARCHS = ("H100-SXM", "H200")


def _config(root: Path, out: Path, **kw) -> RunConfig:
    levels = kw.pop("levels", ())
    return RunConfig(
        problems=tuple(find_problems(root, levels)),
        archs=resolve_archs(list(kw.pop("archs", ARCHS))),
        out=out,
        **{"jobs": 2, "timeout_s": 120.0, **kw},
    )


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = write_suite(
        tmp_path_factory.mktemp("suite"),
        {
            "level1/1_ReLU.py": RELU,
            "level1/2_FFT.py": FFT,
            "level1/10_Exit3.py": EXIT3,
            "level2/1_Segfault.py": SEGFAULT,
            "level2/2_Matmul.py": MATMUL,
        },
    )
    out = tmp_path_factory.mktemp("out")
    stats = run_analysis(_config(root, out), show_progress=False)
    return root, out, stats


def test_every_problem_gets_a_row_per_gpu_and_failures_stay_isolated(suite):
    _, out, stats = suite
    rows, bad = read_rows(out / RESULTS_FILE)
    assert bad == 0 and stats.launched == 5 and stats.written == 10 and stats.skipped == 0
    status = {(p, a): r.status for (p, a), r in rows.items()}
    for arch in ("H100-SXM", "H200-SXM"):  # the alias H200 is recorded under its spec name
        assert status[("level1/1_ReLU.py", arch)] == "ok"
        assert status[("level2/2_Matmul.py", arch)] == "ok"
        assert status[("level1/2_FFT.py", arch)] == "unsupported"
        assert status[("level1/10_Exit3.py", arch)] == "error"
        assert status[("level2/1_Segfault.py", arch)] == "error"


def test_ok_rows_carry_the_analysis(suite):
    _, out, _ = suite
    rows, _ = read_rows(out / RESULTS_FILE)
    mm = rows[("level2/2_Matmul.py", "H100-SXM")]
    assert mm.level == 2 and mm.totals["flops"] == 2 * 16 * 8 * 4
    assert mm.totals["dram_bytes"] == 4 * (16 * 8 + 8 * 4)  # the output fits in L2 (write-back)
    assert 0 < mm.bounds["fused"]["seconds"] <= mm.bounds["unfused"]["seconds"]
    assert mm.seconds > 0 and mm.assumptions and mm.exit_code == 0
    relu = rows[("level1/1_ReLU.py", "H200-SXM")]
    assert relu.totals["flops"] == 64 * 32


def test_unsupported_names_the_op_and_crashes_say_how_they_died(suite):
    _, out, _ = suite
    rows, _ = read_rows(out / RESULTS_FILE)
    fft = rows[("level1/2_FFT.py", "H100-SXM")]
    assert fft.op is not None and "fft" in fft.op and fft.op in fft.error
    assert fft.error.startswith("unsupported op ") and "\n" not in fft.error
    assert re.search(r"status 3|_exit\(3\)", rows[("level1/10_Exit3.py", "H100-SXM")].error)
    assert "SIGSEGV" in rows[("level2/1_Segfault.py", "H100-SXM")].error


def test_a_second_run_does_no_work(suite):
    root, out, _ = suite
    before = (out / RESULTS_FILE).read_bytes()
    stats = run_analysis(_config(root, out), show_progress=False)
    assert (stats.launched, stats.written, stats.skipped) == (0, 0, 10)
    assert (out / RESULTS_FILE).read_bytes() == before


def test_pending_redoes_pairs_under_force_other_flags_or_new_gpus(suite):
    root, out, _ = suite
    done, _ = read_rows(out / RESULTS_FILE)
    assert pending(_config(root, out), done) == []
    assert len(pending(_config(root, out, force=True), done)) == 5
    assert len(pending(_config(root, out, flags=("--precision", "fastest")), done)) == 5
    work = pending(_config(root, out, archs=("H100-SXM", "L4")), done)
    assert [list(archs) for _, archs in work] == [["L4"]] * 5


def test_a_hung_problem_times_out_and_its_process_group_is_killed(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    root = write_suite(
        tmp_path / "suite", {"level1/1_Sleep.py": sleeper(pid_file), "level1/2_ReLU.py": RELU}
    )
    timeout = 4.0
    run_analysis(
        _config(root, tmp_path / "out", archs=("H100-SXM",), timeout_s=timeout), show_progress=False
    )
    rows, _ = read_rows(tmp_path / "out" / RESULTS_FILE)
    hung = rows[("level1/1_Sleep.py", "H100-SXM")]
    assert hung.status == "timeout" and "timeout" in hung.error
    assert hung.seconds >= timeout  # killed at its timeout, not before
    assert rows[("level1/2_ReLU.py", "H100-SXM")].status == "ok"
    pid = int(pid_file.read_text())  # the problem reached its sleep, after starting a grandchild
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _running(pid):
        time.sleep(0.1)
    assert not _running(pid)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def test_fresh_interpreter_isolation_classifies_the_same_way(tmp_path):
    root = write_suite(tmp_path / "suite", {"level1/1_SVD.py": SVD})
    run_analysis(
        _config(root, tmp_path / "out", archs=("H100-SXM",), isolation="subprocess"),
        show_progress=False,
    )
    row = read_rows(tmp_path / "out" / RESULTS_FILE)[0][("level1/1_SVD.py", "H100-SXM")]
    assert row.status == "unsupported" and "svd" in row.op


def test_a_flag_the_analysis_rejects_stops_the_run_and_records_nothing(tmp_path):
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU})
    config = _config(root, tmp_path / "out", archs=("H100-SXM",), flags=("--no-such-flag", "x"))
    with pytest.raises(UsageError, match="rejected its arguments"):
        run_analysis(config, show_progress=False)
    assert read_rows(tmp_path / "out" / RESULTS_FILE)[0] == {}


def test_measure_without_cuda_stops_at_once_and_says_why(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine can measure")
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU, "level1/2_Matmul.py": MATMUL})
    stats = measure_suite(find_problems(root), tmp_path, timeout_s=120, isolation="fork")
    assert (stats.measured, stats.failed) == (0, 1)
    assert stats.stopped.startswith("`solar validate` cannot run here: no CUDA GPU")
    (record,) = [json.loads(line) for line in (tmp_path / MEASURED_FILE).read_text().splitlines()]
    assert record["problem"] == "level1/1_ReLU.py" and record["status"] == "error"
    assert measured_problems(tmp_path / MEASURED_FILE) == set()
