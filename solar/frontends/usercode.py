"""Running the user's code: the one place through which solar calls into a model file (its import,
get_inputs(), the Model constructor, forward() while it is traced, JAX functions).

`running(path, what)` guards one such call:
- everything the user's code raises becomes a one-line ModelFileError naming the user's file and line
  and what solar was doing (`m.py:7: get_inputs() failed: ValueError: ...`), `BaseException`
  included: `sys.exit(...)` and `os._exit(...)` are reported as such (while user code runs,
  `os._exit` and `os.abort` are replaced by stand-ins that raise, in this process only, and put back
  afterwards: a model file must not end the analysis);
- a stop signal (`Signalled`: Ctrl-C, SIGTERM, raised by `stop_signals`' handlers) passes through:
  the CLI exits 130 or 143; a KeyboardInterrupt the file raises itself, with no signal, is the
  file's error like any other (without `stop_signals`, e.g. under the Python API, every
  KeyboardInterrupt passes through);
- a process the user's code forks (os.fork) writes nowhere and never returns into solar: its
  stdout and stderr are the null device from the start (it holds none of solar's pipes open), and
  leaving the guard, or calling `os._exit`, it ends at once (its parent goes on with the analysis);
- the user's stdout and stderr are dropped (solar's own stdout carries reports and `--json`, its
  stderr the one error line; torch prints partial graphs on stderr itself); `input()` sees
  end-of-file instead of waiting on a terminal; warnings and log records (torch's and JAX's
  fake-tensor, symbolic-shape and export logs) are silenced. With `debug` (the CLI's `--debug`)
  the user's stdout goes to stderr, and stderr, warnings and logs are shown. Threads the user's
  code started and left running stay silenced after the guard (`_Muted`).

`deadline(seconds)` bounds a whole analysis in wall-clock time (the CLI's `--timeout`): SIGALRM
raises in whatever Python code is running, user code included (as a BaseException, so that the
user's `except Exception` cannot swallow it) and it becomes an AnalysisTimeout naming where it
stopped; a watchdog thread ends the process with the same line a few seconds later if the code
running ignores that (a BaseException swallowed, a call stuck in native code).

`memory_limit(nbytes)` bounds the real memory an analysis adds (the CLI's `--max-memory`), see there."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import sys
import threading
import time
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from solar.errors import AnalysisTimeout, ModelFileError, SolarError

_state = threading.local()
_SHOW: ContextVar[bool] = ContextVar("show_user_output", default=False)
_real_exit = os._exit
_real_abort = os.abort
#: the process that runs the outermost guard now (a fork of it is the user's process, not solar)
_owner = {"pid": os.getpid()}
#: the user's files (resolved paths) whose code this process ran
_files_run: set[str] = set()
# Seconds the watchdog waits after the alarm before it ends the process itself.
WATCHDOG_GRACE = 5.0
# Seconds between repeats of the alarm once the limit has passed.
REPEAT_S = 0.5


@contextlib.contextmanager
def showing(debug: bool) -> Iterator[None]:
    """Within the block, user code's stdout (on stderr), warnings and logs are shown (`debug`) or
    swallowed (the default)."""
    token = _SHOW.set(debug)
    try:
        yield
    finally:
        _SHOW.reset(token)


def debugging() -> bool:
    return _SHOW.get()


class Signalled(KeyboardInterrupt):
    """A stop signal arrived while user code may run (raised by `stop_signals`' handlers)."""

    exit_code = 130
    line = "solar: interrupted"


class Terminated(Signalled):
    """SIGTERM (ends the command as Ctrl-C does, with its own status)."""

    exit_code = 143
    line = "solar: terminated"


#: what each stop signal raises under `stop_signals`.
STOP_SIGNALS = {signal.SIGINT: Signalled, signal.SIGTERM: Terminated}
_tracking = {"signals": False}


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block (in the main thread; elsewhere nothing changes) SIGINT raises Signalled and
    SIGTERM Terminated, so that a KeyboardInterrupt the user's code raises itself is told apart."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise STOP_SIGNALS[signum]()

    previous = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    outer, _tracking["signals"] = _tracking["signals"], True
    try:
        yield
    finally:
        _tracking["signals"] = outer
        for s, h in previous.items():
            signal.signal(s, h)


class _UserExit(BaseException):
    """Raised by the stand-ins for os._exit / os.abort while user code runs."""

    def __init__(self, call: str) -> None:
        super().__init__(call)
        self.call = call


class _Deadline(BaseException):
    """Raised by the SIGALRM handler of `deadline` (a BaseException: user code cannot swallow it
    with `except Exception`)."""


class _Sink(io.TextIOBase):
    """A writable text stream that keeps nothing."""

    def write(self, s: str) -> int:
        return len(s)

    def writable(self) -> bool:
        return True


# What to do about an exception the tracers raise, by its type's name (appended to its line).
HINTS = {
    "GuardOnDataDependentSymNode": (
        "the program's control flow depends on tensor values (detection post-processing: NMS, a "
        "data-dependent number of boxes), which torch.export cannot trace; analyse the part before "
        "it (e.g. the model's backbone)"
    ),
}


def one_line(exc: BaseException) -> str:
    """`Type: first line of the message` (an exception whose str() fails is shown by its type),
    with what to do where HINTS knows it."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - the user's __str__ is user code too
        message = "<its message could not be printed>"
    name = type(exc).__name__
    hint = f" — {HINTS[name]}" if name in HINTS else ""
    for line in message.splitlines():
        if line.strip():
            return f"{name}: {line.strip()}{hint}"
    return name + hint


def user_frame(exc: BaseException, path: str | None) -> str:
    """`file.py:LINE` of the innermost frame of the exception in the user's file."""
    if path is None:
        return "the program"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == path:
            return f"{Path(path).name}:{frame.lineno}"
    return Path(path).name


def _where(exc: BaseException, path: str | None, what: str) -> str:
    """`while WHAT at file.py:LINE` for a timeout message (innermost guard wins)."""
    frame = user_frame(exc, path)
    at = f" at {frame}" if path is not None and ":" in frame else ""
    return f"while {what}{at}"


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Swap in the user-code environment (stdout, stdin, warnings, logging, exit stand-ins)."""
    saved = (sys.stdout, sys.stderr, sys.stdin, os._exit, os.abort, logging.root.manager.disable)
    debug = debugging()

    def trapped_exit(code: int = 0) -> None:
        if os.getpid() != _owner["pid"]:  # a process the user's code forked: it may end
            _real_exit(code)
        raise _UserExit(f"os._exit({code!r})")

    def trapped_abort() -> None:
        if os.getpid() != _owner["pid"]:
            _real_abort()
        raise _UserExit("os.abort()")

    before = set(threading.enumerate())
    sys.stdout = sys.stderr if debug else _Sink()
    sys.stderr = sys.stderr if debug else _Sink()  # torch prints partial graphs there itself
    sys.stdin = io.StringIO()
    os._exit, os.abort = trapped_exit, trapped_abort  # type: ignore[assignment]
    with warnings.catch_warnings():
        if not debug:
            warnings.simplefilter("ignore")
            logging.disable(logging.CRITICAL)
        try:
            yield
        finally:
            sys.stdout, sys.stderr, sys.stdin, os._exit, os.abort = saved[:5]  # type: ignore[assignment]
            logging.disable(saved[5])
            left = [t for t in threading.enumerate() if t not in before]
            if left and not debug:
                _mute(left)


def _silence_forked_child() -> None:
    """In a process forked while this thread ran user code: stdout and stderr (the descriptors, not
    only Python's streams) go to the null device, unless `debug` shows the user's output."""
    if getattr(_state, "depth", 0) and not debugging():
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_silence_forked_child)


class _Muted:
    """A text stream that drops what the threads in `threads` write (threads the user's code started
    and left running: their prints must not land in solar's report or `--json`)."""

    def __init__(self, stream: Any, threads: weakref.WeakSet) -> None:
        self._stream, self._threads = stream, threads

    def write(self, s: str) -> int:
        if threading.current_thread() in self._threads:
            return len(s)
        return self._stream.write(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _mute(threads: list[threading.Thread]) -> None:
    """From now on, what `threads` write to sys.stdout and sys.stderr is dropped."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(stream, _Muted):
            stream = _Muted(stream, weakref.WeakSet())
            setattr(sys, name, stream)
        stream._threads.update(threads)


@contextlib.contextmanager
def running(path: str | Path | None, what: str) -> Iterator[None]:
    """Guard user code (see the module docstring). `path`: the user's file (resolved), for the
    line in messages; `what`: what solar is doing, e.g. "get_inputs()"."""
    spath = None if path is None else str(Path(path).resolve())
    if spath is not None:
        _files_run.add(spath)
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    outer = (_owner["pid"], _stage["now"])
    if depth == 0:
        _owner["pid"], _stage["now"] = os.getpid(), (spath, what)
    try:
        with _quiet() if depth == 0 else contextlib.nullcontext():
            yield
        if depth == 0:
            _check_memory()
    except (SolarError, Signalled):
        raise
    except KeyboardInterrupt as exc:
        if not _tracking["signals"]:  # no handler of solar's: a real Ctrl-C looks the same
            raise
        raise ModelFileError(
            f"{user_frame(exc, spath)}: {what} raised KeyboardInterrupt, though no Ctrl-C arrived; "
            "a model file must not raise it (remove the raise)"
        ) from None
    except _Deadline as exc:
        if not getattr(exc, "where", None):
            exc.where = _where(exc, spath, what)
        raise
    except SystemExit as exc:
        code = exc.code
        raise ModelFileError(
            f"{user_frame(exc, spath)}: the model file called sys.exit({code!r}) during {what}; "
            "a model file must not exit (remove the call)"
        ) from None
    except _UserExit as exc:
        raise ModelFileError(
            f"{user_frame(exc, spath)}: the model file called {exc.call} during {what}; a model "
            "file must not end the process (remove the call)"
        ) from None
    except BaseException as exc:  # noqa: BLE001 - the user's code failed: anything it raised
        raise ModelFileError(f"{user_frame(exc, spath)}: {what} failed: {one_line(exc)}") from None
    finally:
        _state.depth = depth
        if depth == 0:
            if os.getpid() != _owner["pid"]:  # the user's code forked and this is the child
                _real_exit(0)
            _owner["pid"], _stage["now"] = outer


def files_run() -> frozenset[str]:
    """The user's files (resolved paths) whose code ran in this process, under `running`."""
    return frozenset(_files_run)


def call(fn: Callable[..., Any], what: str, path: str | Path | None, *args: Any) -> Any:
    """fn(*args) under `running(path, what)`."""
    with running(path, what):
        return fn(*args)


# ---- a wall-clock limit on a whole analysis ------------------------------------------------------


def _timeout_message(seconds: float, where: str | None) -> str:
    stopped = f" (stopped {where})" if where else ""
    return (
        f"the analysis did not finish within --timeout {seconds:g} s{stopped}; look for an endless "
        "loop there, or raise --timeout (0: no limit)"
    )


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise AnalysisTimeout when the body runs longer than `seconds` (None or 0: no limit)."""
    if not seconds:
        yield
        return
    main = threading.current_thread() is threading.main_thread()
    state = {"where": None}

    def alarm(signum: int, frame: Any) -> None:
        raise _Deadline()

    def watchdog() -> None:  # the alarm was ignored: end the process with the same one line
        line = f"solar: error: {_timeout_message(seconds, state['where'])}\n"
        os.write(2, line.encode())
        _real_exit(2)

    if main:
        outer, _ = signal.getitimer(signal.ITIMER_REAL)
        if outer and outer <= seconds:  # an enclosing alarm (the caller's own limit) comes first
            yield
            return
    dog = threading.Timer(seconds + WATCHDOG_GRACE, watchdog)
    dog.daemon = True
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, alarm) if main else None
    if main:  # then again every REPEAT_S: code that swallows the first one (torch's lazy imports do) gets another
        signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_S)
    dog.start()
    try:
        yield
    except _Deadline as exc:
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
        state["where"] = getattr(exc, "where", None)
        raise AnalysisTimeout(_timeout_message(seconds, state["where"])) from None
    finally:
        dog.cancel()
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if outer:  # the enclosing alarm, less the time spent here
                signal.setitimer(
                    signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 1e-3)
                )


# ---- a limit on the real memory of a whole analysis ----------------------------------------------
#
# The limit is on resident memory (RSS) added since `memory_limit` began, watched by a thread. The
# kernel's own limits do not fit: RLIMIT_AS counts address space, which torch, JAX and solar's
# unallocated tensors (solar.frontends.torch.construct) reserve by the terabyte without using it,
# and RLIMIT_DATA counts those same private writable mappings. Resident memory is what a model file
# that builds real tensors uses, and what the kernel's out-of-memory killer acts on, silently.

#: the default limit: this share of the machine's memory (the smaller of RAM and a cgroup's limit).
DEFAULT_MEMORY_SHARE = 0.5
#: seconds between two looks at the process's resident memory.
MEMORY_POLL_S = 0.05
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: (resolved user file or None, what solar is doing) of the outermost guard running now
_stage: dict[str, tuple[str | None, str] | None] = {"now": None}
#: the limit in force: {"limit": bytes, "base": resident bytes when it began}, or empty
_memory: dict[str, int] = {}


def _first_int(path: str, field: int = 0, scale: int = 1) -> int | None:
    try:
        return int(Path(path).read_text().split()[field]) * scale
    except (OSError, ValueError, IndexError):
        return None


def resident_bytes() -> int | None:
    """This process's resident memory (None where /proc is not there)."""
    return _first_int("/proc/self/statm", 1, _PAGE)


def machine_memory() -> int | None:
    """The memory this process may use at most: RAM, or a cgroup's limit where smaller."""
    ram = _first_int("/proc/meminfo", 1, 1024)  # "MemTotal: N kB"
    sizes = [n for n in (ram, _first_int("/sys/fs/cgroup/memory.max")) if n]
    return min(sizes) if sizes else None


def default_memory_limit() -> int | None:
    total = machine_memory()
    return int(total * DEFAULT_MEMORY_SHARE) if total else None


def size_text(nbytes: float) -> str:
    """`1.5 GB`, `200 MB` (decimal units)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes / 1e3:.3g} kB"


def over_memory_limit() -> str | None:
    """The one-line message when the analysis' real memory is past the limit (None: within)."""
    limits = dict(_memory)  # one read: the watchdog thread may run while the block ends and clears it
    if not limits:
        return None
    now = resident_bytes()
    used = 0 if now is None else now - limits["base"]
    if used <= limits["limit"]:
        return None
    over = f"{size_text(used)} of real memory, over the --max-memory {size_text(limits['limit'])} limit"
    stage = _stage["now"]
    if stage is None:
        return f"the analysis used {over}; raise --max-memory (0: no limit)"
    path, what = stage
    name = Path(path).name if path else "the program"
    return (
        f"{name}: {what} allocated {over}; solar analyses on fake tensors — build tensors in "
        "get_inputs() and Model(), not at import, and with torch (or raise --max-memory)"
    )


def _check_memory() -> None:
    message = over_memory_limit()
    if message:
        raise ModelFileError(message)


@contextlib.contextmanager
def memory_limit(nbytes: int | None) -> Iterator[None]:
    """Within the block, the process's resident memory may grow by at most `nbytes` (None or 0: no
    limit). Past it, the outermost user-code guard that ends raises a ModelFileError naming the
    file; meanwhile a watchdog thread ends the process with that line (the allocation may be one
    call in native code that never returns to Python before the machine runs out)."""
    base = resident_bytes()
    if not nbytes or base is None or _memory:
        yield
        return
    stop = threading.Event()

    said = threading.Lock()  # one line either way: the watchdog's, or the block's own error after it

    def watchdog() -> None:
        while not stop.wait(MEMORY_POLL_S):
            message = over_memory_limit()
            if message:
                with said:
                    if not stop.is_set():
                        os.write(2, f"solar: error: {message}\n".encode())
                        _real_exit(2)

    _memory.update(limit=nbytes, base=base)
    dog = threading.Thread(target=watchdog, name="solar-memory-limit", daemon=True)
    dog.start()
    try:
        yield
    finally:
        with said:  # a report under way ends the process first; after this none starts
            stop.set()
        _memory.clear()
