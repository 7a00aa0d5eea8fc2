"""Per-problem workers forked from a warm interpreter: a multiprocessing fork server that has imported
torch and solar and analysed a tiny program once (solar.kernelbench.warm) forks one child per problem,
which runs `solar.cli.main(["analyze", FILE, ...])` in a process group of its own.

Isolation is that of a fresh `python -m solar.cli analyze` (a crash or a hang costs one child; every
child starts from the same warm state, never from a previous child), without paying the seconds of
importing torch per problem."""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from solar.kernelbench.worker import Outcome

#: what the fork server imports before it forks anything; an ImportError there is ignored. `warm`
#: comes first: it hides the GPUs before anything imports torch.
PRELOAD = ["solar.kernelbench.warm"]


def _child(argv: list[str], out: str, err: str) -> None:
    """Run the solar CLI with stdout and stderr going to files; exit with its status."""
    os.setsid()  # its own process group: a timeout kills it and anything it started
    for fd, path in ((1, out), (2, err)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    try:
        from solar.cli import main

        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a bug in solar: keep the traceback, like `python -m solar.cli`
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


def _context() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def run_forked(
    argv: list[str],
    timeout_s: float,
    on_start: Callable[[int], None] | None = None,
    on_end: Callable[[int], None] | None = None,
) -> Outcome:
    """The Outcome of `solar ARGV` in a forked child; its seconds and the timeout count from the fork.
    `on_start` / `on_end` get the child's pid (its process group) while it runs."""
    from solar.kernelbench.worker import Outcome, kill_group

    with tempfile.TemporaryDirectory(prefix="solar-kb-") as tmp:
        out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
        proc = _context().Process(target=_child, args=(argv, str(out), str(err)), daemon=True)
        proc.start()  # returns once the server has forked the child (the first call waits for its warm-up)
        start = time.perf_counter()
        if on_start is not None:
            on_start(proc.pid)
        try:
            proc.join(timeout_s)
            code = proc.exitcode
            if code is None:
                kill_group(proc.pid)
                proc.kill()
                proc.join()
        finally:
            if on_end is not None:
                on_end(proc.pid)
        seconds = time.perf_counter() - start
        outcome = Outcome(code, _read(out), _read(err), seconds)
        proc.close()
    return outcome
