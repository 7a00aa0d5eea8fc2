"""`--ray`: the suite runner's workers as tasks on a real (local, 2-CPU) Ray cluster — a crash and a
hang cost one row each, rows equal the local runner's, and a run stopped mid-way (its running tasks'
Ray workers killed) resumes without redoing finished problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from solar.kernelbench import ray_runner  # noqa: E402
from solar.kernelbench.plan import RunConfig, resolve_archs  # noqa: E402
from solar.kernelbench.problems import find_problems  # noqa: E402
from solar.kernelbench.results import RESULTS_FILE, RowWriter, read_rows  # noqa: E402
from solar.kernelbench.runner import run_analysis  # noqa: E402
from tests.kernelbench.helpers import EXIT3, RELU, write_suite  # noqa: E402

HANG = "import time\ntime.sleep(600)\n" + RELU
QUICK = {"level1/1_ReLU.py": RELU, "level2/1_Exit3.py": EXIT3}


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _config(root: Path, out: Path, ray_address: str | None, timeout_s: float = 120.0) -> RunConfig:
    return RunConfig(
        problems=tuple(find_problems(root)), archs=resolve_archs(["H100-SXM", "B200"]), out=out,
        jobs=2, timeout_s=timeout_s, ray=ray_address,
    )


def _lines(out: Path) -> list[str]:
    """results.jsonl with each worker's wall time zeroed (the one field that differs run to run)."""
    rows = [json.loads(x) for x in (out / RESULTS_FILE).read_text().splitlines()]
    return sorted(json.dumps({**r, "seconds": 0.0}, sort_keys=True) for r in rows)


def test_a_crash_and_a_hang_cost_one_row_each_and_rows_equal_the_local_runners(tmp_path):
    # the quick problems get a generous timeout (a loaded machine must not turn them into timeouts);
    # the hang gets a short one in a second run on the same OUT, which resumes past the others
    quick = write_suite(tmp_path / "quick", QUICK)
    stats = run_analysis(_config(quick, tmp_path / "ray", ""), show_progress=False)
    assert (stats.launched, stats.written) == (2, 4)
    root = write_suite(tmp_path / "suite", {**QUICK, "level1/3_Hang.py": HANG})
    stats = run_analysis(_config(root, tmp_path / "ray", "", timeout_s=3.0), show_progress=False)
    assert (stats.launched, stats.written, stats.skipped) == (1, 2, 4)
    rows, _ = read_rows(tmp_path / "ray" / RESULTS_FILE)
    status = {p: r.status for (p, a), r in rows.items()}
    assert status == {"level1/1_ReLU.py": "ok", "level2/1_Exit3.py": "error", "level1/3_Hang.py": "timeout"}
    assert "os._exit(3)" in rows[("level2/1_Exit3.py", "B200")].error
    run_analysis(_config(quick, tmp_path / "local", None), show_progress=False)
    assert [x for x in _lines(tmp_path / "ray") if "3_Hang" not in x] == _lines(tmp_path / "local")


class _StopAfterOne(RowWriter):
    def write(self, row):
        super().write(row)
        raise KeyboardInterrupt  # the run is stopped once one row is written


def test_a_stopped_run_resumes_without_redoing_finished_problems(tmp_path, monkeypatch):
    root = write_suite(tmp_path / "suite", QUICK)
    out = tmp_path / "out"
    monkeypatch.setattr(ray_runner, "RowWriter", _StopAfterOne)
    with pytest.raises(KeyboardInterrupt):  # the other tasks are cancelled, their workers killed
        run_analysis(_config(root, out, ""), show_progress=False)
    monkeypatch.undo()
    [(first, _)] = read_rows(out / RESULTS_FILE)[0]
    stats = run_analysis(_config(root, out, ""), show_progress=False)
    assert (stats.launched, stats.skipped) == (2, 1)  # the finished pair is skipped
    rows, _ = read_rows(out / RESULTS_FILE)
    assert len(rows) == 4 and {r.status for r in rows.values()} == {"ok", "error"}
    assert sum(r.problem == first for r in rows.values()) == 2


def test_without_ray_the_flag_says_how_to_install_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kw):
        if name == "ray":
            raise ImportError(name)
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    with pytest.raises(Exception, match=r"pip install 'solar-sol\[ray\]'"):
        ray_runner._ray()


def test_measure_on_a_cluster_without_gpus_says_so_at_once(tmp_path):
    stats = ray_runner.measure_on_ray([], tmp_path, 10.0, False, "")
    assert stats.measured == 0 and "no GPUs" in stats.stopped
