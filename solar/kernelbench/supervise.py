"""The supervisor of one batch worker: a small process that starts the worker, waits for it, and then
kills whatever the worker left behind, so that a problem's processes never outlive its row.

It is a child subreaper (an orphan of the worker, such as a daemon that called `setsid` and forked
again, reparents to it rather than to init, so it stays in the supervisor's /proc tree) and dies with
its parent (PR_SET_PDEATHSIG): when the runner or the fork server goes, SIGTERM reaches it and it kills
its tree. It exits as the worker did (same status, same signal), so the runner classifies the worker.

`python -m solar.kernelbench.supervise CMD ...` supervises a command (--isolation subprocess);
solar.kernelbench.zygote calls `supervise` in a forked child (the default isolation)."""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
from collections.abc import Callable

from solar.kernelbench.procs import become_subreaper, die_with_parent, kill_tree

#: after the worker ends, how long the supervisor keeps killing and reaping what it left.
CLEANUP_LIMIT_S = 5.0
#: the largest file a worker may write (RLIMIT_FSIZE): its stdout and stderr are files, and a problem
#: printing in a loop must not fill the disk before its timeout.
MAX_FILE_BYTES = 256 << 20


class _Terminated(BaseException):
    pass


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _reap_all(limit_s: float) -> None:
    """Kill every remaining descendant and reap the children (orphans reparented here included)."""
    deadline = time.monotonic() + limit_s
    while True:
        kill_tree(os.getpid(), include_root=False, group=False)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] != 0:
                pass
        except ChildProcessError:
            return  # no child left
        if time.monotonic() > deadline:
            return
        time.sleep(0.01)


def supervise(worker: Callable[[], int]) -> int:
    """Run `worker()` in a forked child and return its wait status, with nothing of it left running.

    The child resets SIGTERM and exits with `worker()`'s return value. A SIGTERM to the supervisor
    kills the worker's tree too and then ends the supervisor by SIGTERM."""
    become_subreaper()
    die_with_parent()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    previous = signal.signal(signal.SIGTERM, _terminate)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        _limit_file_size(MAX_FILE_BYTES)
        code = 1
        try:
            code = worker()
        finally:
            os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)
    status = _terminated_status()
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        while True:
            done, wait_status = os.waitpid(-1, 0)  # also reaps orphans reparented here
            if done == pid:
                status = wait_status
                break
    except _Terminated:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # clean up undisturbed
        _reap_all(CLEANUP_LIMIT_S)
        signal.signal(signal.SIGTERM, previous)
    return status


def _limit_file_size(limit: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY or soft > limit:
        capped = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_FSIZE, (capped, hard))


def _terminated_status() -> int:
    return signal.SIGTERM  # a wait status meaning "killed by SIGTERM"


def exit_as(status: int) -> None:
    """End this process as a process with wait status `status` ended: same exit code or signal."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the worker already dumped (or not)
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _exec(command: list[str]) -> Callable[[], int]:
    def run() -> int:
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"solar: error: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127

    return run


def main(argv: list[str] | None = None) -> None:
    command = sys.argv[1:] if argv is None else argv
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("usage: python -m solar.kernelbench.supervise [--] COMMAND ...", file=sys.stderr)
        os._exit(2)
    exit_as(supervise(_exec(command)))


if __name__ == "__main__":
    main()
