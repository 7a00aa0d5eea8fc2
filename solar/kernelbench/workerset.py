"""The worker processes of one suite run (WorkerSet): a marker and an output folder per worker, every
worker killed when the run is stopped, the run's temporary folder removed; what a finished worker
left (Outcome, read from its output files) and how one is killed with everything it started
(solar.kernelbench.procs)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from solar.kernelbench.procs import alive, kill_marked, kill_tree

#: at most this much of a worker's stdout or stderr is read (its end: the report is printed last).
_MAX_OUTPUT_BYTES = 16 << 20
#: prefix of the run's temporary folder (workers' output files; removed when the run ends).
TEMP_PREFIX = "solar-kb-"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a finished (or killed) worker left: exit code (None: killed at the timeout)."""

    returncode: int | None
    stdout: str
    stderr: str
    seconds: float


class Stopped(BaseException):
    """The run was stopped (a signal, an error elsewhere): this worker was not started or killed."""


class WorkerSet:
    """The workers of one run: their supervisors' pids, a marker per worker (`RUN:N`) and the run's
    temporary folder, so that a stopped run kills every worker and leaves no folder behind.

    Use as a context manager: leaving it by an exception stops every worker; leaving it in any way
    kills whatever still carries the run's marker and removes the folder."""

    def __init__(self) -> None:
        self.run_id = uuid.uuid4().hex[:16]
        self._lock = threading.Lock()
        self._pids: dict[int, str] = {}
        self._count = 0
        self._stopped = False
        _remove_stale_folders()
        prefix = f"{TEMP_PREFIX}{os.getpid()}@{socket.gethostname()}-"
        self.tmp = Path(tempfile.mkdtemp(prefix=prefix))

    @property
    def stopped(self) -> bool:
        return self._stopped

    def marker(self) -> str:
        """A marker for the next worker; raises Stopped once the run is stopped."""
        with self._lock:
            if self._stopped:
                raise Stopped
            self._count += 1
            return f"{self.run_id}:{self._count}"

    @contextlib.contextmanager
    def workdir(self) -> Iterator[Path]:
        """A folder for one worker's output files, removed afterwards."""
        path = Path(tempfile.mkdtemp(dir=self.tmp))
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)

    def add(self, pid: int, marker: str) -> None:
        with self._lock:
            self._pids[pid] = marker
            stopped = self._stopped
        if stopped:  # started while the run was being stopped
            stop_worker(pid, marker)

    def discard(self, pid: int) -> None:
        with self._lock:
            self._pids.pop(pid, None)

    def stop(self) -> None:
        """Kill every running worker; any worker started from now on is killed at once."""
        with self._lock:
            self._stopped = True
            running = list(self._pids.items())
        for pid, marker in running:
            stop_worker(pid, marker)

    def close(self) -> None:
        prefix = f"{self.run_id}:"
        kill_marked(lambda value: value.startswith(prefix))
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> WorkerSet:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None:
            self.stop()
        self.close()


def _remove_stale_folders() -> None:
    """Remove the temporary folders of runs on this host whose process is gone (killed outright, by
    SIGKILL say, so that nothing removed them): `solar-kb-PID@HOST-*`, and the fork server's
    `solar-kb-warm-PID@HOST-*`. The host keeps a run in another pid namespace safe."""
    host = re.escape(socket.gethostname())
    stale = re.compile(rf"^{re.escape(TEMP_PREFIX)}(?:warm-)?(\d+)@{host}-[^-@]+$")
    try:
        folders = list(Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*"))
    except OSError:
        return
    for folder in folders:
        match = stale.match(folder.name)
        if match and folder.is_dir() and not alive(int(match.group(1))):
            shutil.rmtree(folder, ignore_errors=True)


def stop_worker(pid: int, marker: str) -> None:
    """Kill a worker's supervisor, its process group, its descendants and what carries its marker."""
    kill_tree(pid)
    kill_marked(lambda value: value == marker)


def after_worker(pid: int, marker: str, returncode: int | None) -> None:
    """Once a supervisor is gone (and reaped): it leaves nothing behind when it exits by itself, but
    one killed by a signal (the OOM killer, a problem killing its parent) may leave its worker. Its
    session and process group are killed then, never its pid, which may already be reused."""
    if returncode is not None and returncode < 0:
        kill_tree(pid, include_root=False)
        kill_marked(lambda value: value == marker)


def read_output(path: Path) -> str:
    """A worker's output file (its last _MAX_OUTPUT_BYTES), decoded leniently."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - _MAX_OUTPUT_BYTES))
            return f.read().decode(errors="replace")
    except OSError:
        return ""
