"""Per-problem workers forked from a warm interpreter: a multiprocessing fork server that has imported
torch and solar and analysed a tiny program once (solar.kernelbench.warm) forks one child per problem.
The child starts a session of its own and supervises (solar.kernelbench.supervise) a second fork,
which runs `solar analyze FILE ...` in-process (`run_cli`: the analyze and validate commands under
the program's contract, solar.commands.entry).

Isolation is that of a fresh `python -m solar.cli analyze` (a crash or a hang costs one child; every
child starts from the same warm state, never from a previous child), without paying the seconds of
importing torch per problem. `stop_server` ends the fork server (and its warm-up folder) when a run
ends or is stopped."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from solar.commands import analyze, validate
from solar.commands.entry import parser, run
from solar.kernelbench.procs import MARKER_VAR, SAFE_PATH, kill_tree
from solar.kernelbench.supervise import exit_as, supervise
from solar.kernelbench.workerset import Outcome, WorkerSet, after_worker, read_output, stop_worker

#: what the fork server imports before it forks anything; an ImportError there is ignored. `warm`
#: comes first: it hides the GPUs before anything imports torch.
PRELOAD = ["solar.kernelbench.warm"]
#: the fork server's warm-up folder is `WARM_PREFIX<server pid>@<host>-...` (solar.kernelbench.warm).
WARM_PREFIX = "solar-kb-warm-"
#: the commands a worker runs (`solar analyze`; `solar validate` for --measure).
COMMANDS = (analyze, validate)


def run_cli(argv: list[str]) -> int:
    """`solar ARGV` in this process, as `python -m solar.cli ARGV` would run it; its exit status."""
    try:
        code = run(parser(COMMANDS), argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a bug in solar: keep the traceback, like `python -m solar.cli`
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code or 0


def _child(argv: list[str], out: str, err: str, marker: str) -> None:
    """Supervise the solar CLI run with stdout and stderr going to files; exit as it did."""
    os.setsid()  # its own session and process group, away from the terminal's signals
    _release_server()
    for fd, path in ((1, out), (2, err)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    os.environ[MARKER_VAR] = marker
    exit_as(supervise(lambda: run_cli(argv)))


def _release_server() -> None:
    """Close this child's copy of the fork server's "alive" pipe. The server exits when every copy
    is closed; with only the runner's left, a runner killed outright (SIGKILL) ends the server, whose
    death signals every supervisor (PR_SET_PDEATHSIG) to kill its worker."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(fd, int):
        with contextlib.suppress(OSError):
            os.close(fd)
        server._forkserver_alive_fd = None


def _context() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


@contextlib.contextmanager
def _safe_path():
    """While the block runs, a fork server started gets SAFE_PATH in its environment (the standard
    library starts it with `python -c`, whose sys.path begins with the current directory)."""
    saved = {key: os.environ.get(key) for key in SAFE_PATH}
    os.environ.update(SAFE_PATH)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start_server() -> None:
    """Start the fork server now (from the calling thread) if it is not running."""
    _context()
    with _safe_path():
        multiprocessing.forkserver.ensure_running()


def stop_server() -> None:
    """Kill the fork server, anything it forked, and its warm-up folder. The standard library has no
    public way to stop it; its own tests use `ForkServer._stop`, which is used here after the kill
    (without those names, the server is left to exit with this process, as it does on its own)."""
    server = getattr(multiprocessing.forkserver, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if pid is None:
        return
    kill_tree(pid, group=False)  # it shares this process's group
    with contextlib.suppress(OSError, AttributeError):
        server._stop()  # closes its socket and reaps it
    for folder in Path(tempfile.gettempdir()).glob(f"{WARM_PREFIX}{pid}@*"):
        shutil.rmtree(folder, ignore_errors=True)


def run_forked(argv: list[str], timeout_s: float, workers: WorkerSet) -> Outcome:
    """The Outcome of `solar ARGV` in a forked child; its seconds and timeout count from the fork."""
    marker = workers.marker()
    with workers.workdir() as tmp:
        out, err = tmp / "stdout", tmp / "stderr"
        proc = _context().Process(
            target=_child, args=(argv, str(out), str(err), marker), daemon=True
        )
        with _safe_path():  # starts the server if it is not running
            proc.start()  # returns once the server has forked the child (the first: warm-up)
        start = time.perf_counter()
        try:
            workers.add(proc.pid, marker)
            proc.join(timeout_s)
            code = proc.exitcode
            if code is None:
                stop_worker(proc.pid, marker)
                proc.join()
        except BaseException:  # stopped (a signal in this thread): leave nothing running
            stop_worker(proc.pid, marker)
            raise
        finally:
            workers.discard(proc.pid)
        after_worker(proc.pid, marker, code)
        seconds = time.perf_counter() - start
        outcome = Outcome(code, read_output(out), read_output(err), seconds)
        proc.close()
    return outcome
