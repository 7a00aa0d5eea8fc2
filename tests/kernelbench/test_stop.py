"""Stopping batch work: timeouts and finished workers leave no process behind (grandchildren in
sessions of their own included), SIGTERM / SIGINT end `solar kernelbench` cleanly, and timed-out or
crashed rows are redone on request."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from solar.kernelbench.cli import main
from solar.kernelbench.problems import find_problems
from solar.kernelbench.results import RESULTS_FILE, Row, read_rows
from solar.kernelbench.plan import RunConfig, resolve_archs
from solar.kernelbench.runner import run_analysis
from solar.kernelbench.worker import run_command
from solar.kernelbench.workerset import WorkerSet
from tests.kernelbench.helpers import (
    PARRICIDE,
    RELU,
    daemon_then_relu,
    flagged,
    parricide,
    running,
    setsid_hang,
    wait_until,
    write_suite,
)

ARCH = "H100-SXM"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def _rows(out: Path) -> dict[str, str]:
    return {p: r.status for (p, _), r in read_rows(out / RESULTS_FILE)[0].items()}


def _run(root: Path, out: Path, isolation: str, timeout_s: float) -> dict[str, Row]:
    config = RunConfig(
        problems=tuple(find_problems(root)),
        archs=resolve_archs([ARCH]),
        out=out,
        jobs=2,
        timeout_s=timeout_s,
        isolation=isolation,
    )
    run_analysis(config, show_progress=False)
    return {p: r for (p, _), r in read_rows(out / RESULTS_FILE)[0].items()}


def test_a_timeout_kills_a_grandchild_in_a_session_of_its_own(tmp_path):
    pid_file = tmp_path / "hang.pid"
    root = write_suite(tmp_path / "suite", {"level1/1_Hang.py": setsid_hang(pid_file)})
    rows = _run(root, tmp_path / "out", "fork", timeout_s=5.0)
    assert rows["level1/1_Hang.py"].status == "timeout"
    pid = int(pid_file.read_text())
    assert wait_until(lambda: not running(pid)), f"grandchild {pid} still runs"


def test_a_fresh_interpreter_worker_is_bounded_by_its_timeout_despite_held_pipes(tmp_path):
    """--isolation subprocess, on a plain command (a fresh `solar analyze` takes seconds to start):
    the grandchild holds stdout and stderr open, in a session of its own, and the worker hangs."""
    pid_file = tmp_path / "hang.pid"
    code = (
        "import subprocess, sys, time; print('started', flush=True); "
        "c = subprocess.Popen(['sleep', '600'], start_new_session=True); "
        "open(sys.argv[1], 'w').write(str(c.pid)); time.sleep(600)"
    )
    with WorkerSet() as workers:
        outcome = run_command([sys.executable, "-c", code, str(pid_file)], 2.0, workers)
    assert outcome.returncode is None and outcome.stdout == "started\n"
    pid = int(pid_file.read_text())
    assert wait_until(lambda: not running(pid)), f"grandchild {pid} still runs"


@pytest.mark.parametrize("isolation", ["fork", "subprocess"])
def test_a_worker_that_leaves_a_daemon_is_ok_and_the_daemon_dies(tmp_path, isolation):
    pid_file = tmp_path / "daemon.pid"
    root = write_suite(tmp_path / "suite", {"level1/1_Daemon.py": daemon_then_relu(pid_file)})
    row = _run(root, tmp_path / "out", isolation, timeout_s=300.0)["level1/1_Daemon.py"]
    assert row.status == "ok" and row.totals["flops"] == 8  # no wait for the daemon's pipes
    pid = int(pid_file.read_text())
    assert wait_until(lambda: not running(pid)), f"daemon {pid} still runs"


def test_a_worker_whose_supervisor_is_killed_is_killed_too(tmp_path):
    pid_file = tmp_path / "worker.pid"
    root = write_suite(tmp_path / "suite", {"level1/1_Parricide.py": parricide(pid_file)})
    row = _run(root, tmp_path / "out", "fork", timeout_s=300.0)["level1/1_Parricide.py"]
    assert row.status == "error" and "SIGKILL" in row.error  # not a wait for the timeout
    pid = int(pid_file.read_text())
    assert wait_until(lambda: not running(pid)), f"orphaned worker {pid} still runs"


def test_a_fresh_interpreter_whose_supervisor_is_killed_is_killed_too(tmp_path):
    pid_file = tmp_path / "worker.pid"
    code = PARRICIDE.format(pid_file=str(pid_file))
    with WorkerSet() as workers:
        outcome = run_command([sys.executable, "-c", code], 300.0, workers)
        assert outcome.returncode == -signal.SIGKILL
        pid = int(pid_file.read_text())
        assert wait_until(lambda: not running(pid)), f"orphaned worker {pid} still runs"


def _flag_suite(tmp_path: Path, action: str) -> tuple[Path, Path, list[str]]:
    flag = tmp_path / "flag"
    flag.touch()
    root = write_suite(tmp_path / "suite", {"level1/1_Flag.py": flagged(flag, action)})
    argv = [str(root), "--arch", ARCH, "--out", str(tmp_path / "out"), "--jobs", "2"]
    return flag, tmp_path / "out", argv


@pytest.mark.parametrize(
    ("action", "status", "retry_flag"),
    [("hang", "timeout", "--retry-timeouts"), ("crash", "error", "--retry-errors")],
)
def test_final_rows_are_redone_only_when_asked(tmp_path, capsys, action, status, retry_flag):
    flag, out, argv = _flag_suite(tmp_path, action)
    assert main([*argv, "--timeout", "3" if action == "hang" else "120"]) == 0
    assert _rows(out) == {"level1/1_Flag.py": status}
    flag.unlink()  # the problem would now succeed
    other = "--retry-errors" if retry_flag == "--retry-timeouts" else "--retry-timeouts"
    for extra in ([], [other]):  # a plain re-run, or one retrying the other status, redoes nothing
        capsys.readouterr()
        assert main([*argv, "--timeout", "120", *extra]) == 0
        assert "analysed 0 problems" in capsys.readouterr().err
        assert _rows(out)["level1/1_Flag.py"] == status
    assert main([*argv, "--timeout", "120", retry_flag]) == 0
    assert "analysed 1 problems" in capsys.readouterr().err
    assert _rows(out) == {"level1/1_Flag.py": "ok"}


# --- signals: `solar kernelbench` in a session of its own, stopped like a user would stop it ------

TAG = "SOLAR_KB_TEST_TAG"


def _tagged(tag: str) -> set[int]:
    """Live processes whose environment carries TAG=tag (inherited by everything the run started)."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if f"{TAG}={tag}".encode() in environ.split(b"\0") and running(int(name)):
            found.add(int(name))
    return found


def _in_session(leader: int) -> list[str]:
    """`ps` lines of live processes in the process group or session of `leader`."""
    listing = subprocess.run(
        ["ps", "-e", "-o", "pid=,pgid=,sid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    lines = []
    for line in listing.splitlines():
        pid, pgid, sid, stat, *_ = line.split(None, 4)
        if leader in (int(pgid), int(sid)) and not stat.startswith("Z"):
            lines.append(line)
    return lines


@dataclass
class _Run:
    proc: subprocess.Popen
    pids: list[Path]  # pid files of the hangs' grandchildren
    out: Path
    tmp: Path  # the run's TMPDIR
    tag: str

    def wait(self, when: str) -> None:
        if when == "running":  # the quick problem's row is written and both hangs are running

            def ready() -> bool:
                return all(p.exists() for p in self.pids) and "level1/1_ReLU.py" in _rows(self.out)
        else:  # the fork server is importing torch and analysing its tiny program

            def ready() -> bool:
                return any(self.tmp.glob("solar-kb-warm-*"))

        assert wait_until(lambda: ready() or self.proc.poll() is not None, 300)
        assert self.proc.poll() is None, self.proc.communicate()[1]

    def nothing_left(self) -> None:
        assert wait_until(lambda: not _in_session(self.proc.pid)), _in_session(self.proc.pid)
        assert wait_until(lambda: not _tagged(self.tag), 60), _tagged(self.tag)
        for pid_file in self.pids:
            if pid_file.exists():
                pid = int(pid_file.read_text())
                assert wait_until(lambda: not running(pid)), f"grandchild {pid} still runs"


@contextlib.contextmanager
def _kernelbench(tmp_path: Path, isolation: str, remove_tmp: bool = True) -> Iterator[_Run]:
    """`solar kernelbench` on a quick problem and two hangs, in a session of its own (its TMPDIR
    removed after, unless the caller looks into it later and removes it itself)."""
    pids = [tmp_path / "hang1.pid", tmp_path / "hang2.pid"]
    root = write_suite(
        tmp_path / "suite",
        {
            "level1/1_ReLU.py": RELU,
            "level1/2_Hang.py": setsid_hang(pids[0]),
            "level1/3_Hang.py": setsid_hang(pids[1]),
        },
    )
    out = tmp_path / "out"
    # the run's TMPDIR, short: multiprocessing's fork server binds a Unix socket in it (at most 107
    # bytes of path), which pytest's tmp_path exceeds once its session number has three digits
    tmp = Path(tempfile.mkdtemp(prefix="kb-", dir=tempfile.gettempdir()))
    tag = f"{os.getpid()}-{tmp_path.name}"
    env = {**os.environ, "TMPDIR": str(tmp), TAG: tag}
    env["PYTHONPATH"] = os.pathsep.join([str(Path.cwd()), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "solar.kernelbench", str(root), "--arch", ARCH]
    command += ["--out", str(out), "--jobs", "3", "--timeout", "120", "--isolation", isolation]
    proc = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        yield _Run(proc, pids, out, tmp, tag)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if remove_tmp:
            shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize(
    ("signum", "isolation", "when"),
    [
        (signal.SIGTERM, "fork", "running"),
        (signal.SIGINT, "subprocess", "running"),
        (signal.SIGINT, "fork", "running"),
        (signal.SIGTERM, "fork", "warming up"),
    ],
)
def test_a_signal_ends_the_run_cleanly(tmp_path, signum, isolation, when):
    with _kernelbench(tmp_path, isolation) as run:
        run.wait(when)
        if signum == signal.SIGINT:
            os.killpg(run.proc.pid, signum)  # Ctrl-C reaches the terminal's whole foreground group
        else:
            run.proc.send_signal(signum)  # `kill PID`
        _, stderr = run.proc.communicate(timeout=120)
    err = stderr.decode(errors="replace")
    assert run.proc.returncode == 128 + signum, err
    assert "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith(f"solar: stopped by {signal.Signals(signum).name}; ")
    run.nothing_left()
    assert not list(run.tmp.glob("solar-kb-*")), list(run.tmp.iterdir())
    if when == "running":
        assert _rows(run.out) == {"level1/1_ReLU.py": "ok"}  # kept; nothing recorded for the hangs
        lines = (run.out / RESULTS_FILE).read_text().splitlines()
        assert [json.loads(line)["problem"] for line in lines] == ["level1/1_ReLU.py"]
        assert "rows in" in last
    else:
        assert "no rows were written" in last


def test_a_runner_killed_outright_takes_its_workers_along(tmp_path, monkeypatch):
    """SIGKILL cannot be handled: the fork server exits once the runner is gone, and each
    supervisor's parent-death signal kills its worker's tree. The next run removes the folder."""
    with _kernelbench(tmp_path, "fork", remove_tmp=False) as run:
        run.wait("running")
        run.proc.kill()
        run.proc.communicate(timeout=120)
    try:
        run.nothing_left()
        assert list(run.tmp.glob("solar-kb-*@*"))  # nobody was left to remove it
        monkeypatch.setattr(tempfile, "tempdir", str(run.tmp))
        with WorkerSet() as workers:
            assert workers.tmp.parent == run.tmp
            assert list(run.tmp.glob("solar-kb-*")) == [workers.tmp]  # the dead run's folder is gone
    finally:
        shutil.rmtree(run.tmp, ignore_errors=True)
