"""The worker supervisor and process-tree kills, on plain commands (no torch, no solar analysis)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from solar.kernelbench.procs import descendants, kill_tree
from solar.kernelbench.supervise import MAX_FILE_BYTES
from solar.kernelbench.worker import supervised
from tests.kernelbench.helpers import running, wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

#: fork, setsid, fork: a daemon holding stdout; the pid goes to argv[1]; then exit with argv[2].
DAEMONIZE = """
import os, sys, time
first = os.fork()
if first == 0:
    os.setsid()
    daemon = os.fork()
    if daemon == 0:
        time.sleep(600)
        os._exit(0)
    open(sys.argv[1], "w").write(str(daemon))
    os._exit(0)
os.waitpid(first, 0)
sys.exit(int(sys.argv[2]))
"""


def _supervise(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        supervised([sys.executable, *command]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        start_new_session=True,
    )


def test_the_supervisor_exits_as_its_worker_and_kills_what_it_left(tmp_path):
    pid_file = tmp_path / "daemon.pid"
    done = _supervise("-c", DAEMONIZE, str(pid_file), "5")
    assert done.returncode == 5, done.stderr
    pid = int(pid_file.read_text())
    assert wait_until(lambda: not running(pid)), f"daemon {pid} still runs"


def test_a_signal_death_is_relayed_and_output_files_are_capped():
    assert _supervise("-c", "import os; os.kill(os.getpid(), 11)").returncode == -signal.SIGSEGV
    limit = _supervise("-c", "import resource; print(resource.getrlimit(resource.RLIMIT_FSIZE)[0])")
    assert int(limit.stdout) == MAX_FILE_BYTES


def test_sigterm_to_the_supervisor_ends_its_tree(tmp_path):
    pid_file = tmp_path / "daemon.pid"
    hang = DAEMONIZE.replace("sys.exit", "time.sleep(600); sys.exit")
    proc = subprocess.Popen(
        supervised([sys.executable, "-c", hang, str(pid_file), "0"]), start_new_session=True
    )
    try:
        assert wait_until(pid_file.exists)
        worker = descendants(proc.pid)
        assert worker  # the worker and its daemon (reparented to the supervisor)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == -signal.SIGTERM
    finally:
        kill_tree(proc.pid)
    assert wait_until(lambda: not any(running(p) for p in worker | {int(pid_file.read_text())}))


def test_kill_tree_reaches_a_grandchild_in_its_own_session(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time; "
        "c = subprocess.Popen(['sleep', '600'], start_new_session=True); "
        "open(sys.argv[1], 'w').write(str(c.pid)); time.sleep(600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(pid_file)], start_new_session=True)
    try:
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text() != "")
        grandchild = int(pid_file.read_text())
        assert os.getsid(grandchild) != os.getsid(proc.pid)  # killpg alone would miss it
        kill_tree(proc.pid)
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        kill_tree(proc.pid)
    assert wait_until(lambda: not running(grandchild))
