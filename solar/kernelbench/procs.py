"""Process trees of batch workers: finding every descendant of a process through /proc, freezing and
killing a whole tree, the environment marker every worker and its descendants carry, and the Linux
prctl flags (child subreaper, parent-death signal) that keep a tree from escaping its supervisor.

A process that calls `setsid` leaves its process group, so `killpg` alone cannot stop what a problem
started. Here a tree is the parent chain in /proc plus the supervisor's session: while a worker's
supervisor (solar.kernelbench.supervise) lives, every descendant is in its tree, since orphans
reparent to it (PR_SET_CHILD_SUBREAPER); once it is gone, what stayed in its session is found by the
session id. The marker is a third net: /proc/PID/environ is the environment a process was exec'd
with, so it finds every exec'd descendant (a forked-only one carries the marker in memory only).
Only a process that left the session, never exec'd (or cleared its environment) and outlived a
supervisor killed from outside would not be found.

Linux only; elsewhere TRACKING is False and kills fall back to the process group."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Iterable

#: environment variable every worker (and what it starts) carries: `RUN:N`, unique per worker.
MARKER_VAR = "SOLAR_KB_WORKER"
#: environment every worker interpreter (and the fork server) starts with: no current directory on
#: sys.path (Python >= 3.11), so that solar is imported from where it is installed, whatever folder
#: the batch runs in (a `solar/` folder there would shadow it).
SAFE_PATH = {"PYTHONSAFEPATH": "1"}
TRACKING = sys.platform.startswith("linux") and os.path.isdir("/proc/self")
NOTE = (
    f"on {sys.platform}, processes a problem starts in a new session are not tracked; only the "
    "worker's process group is killed at a timeout (Linux tracks every descendant)"
)

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: rounds of "find the tree, stop what is new" before killing; a stopped process cannot fork.
_FREEZE_ROUNDS = 50


def _prctl(option: int, value: int) -> bool:
    if not TRACKING:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Orphaned descendants of this process reparent to it instead of to init."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(signum: int = signal.SIGTERM) -> bool:
    """Get `signum` when the parent (the thread that started this process) exits."""
    return _prctl(_PR_SET_PDEATHSIG, signum)


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()  # after `pid (comm)`, which may hold spaces


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _table() -> dict[int, tuple[int, int]]:
    """{pid: (parent pid, session id)} of every live process (zombies excluded)."""
    found = {}
    for pid in _pids():
        fields = _stat_fields(pid)
        if fields and fields[0] != "Z":
            found[pid] = (int(fields[1]), int(fields[4]))
    return found


def descendants(root: int) -> set[int]:
    """Every live process below `root`, `root` excluded: its descendants by the parent chain, the
    members of the session `root` leads (an orphan of a killed leader that stayed in the session
    is found so) and their descendants. A session id is not reused while the session has members,
    so this is sound after `root` itself is gone."""
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {pid for pid, (_, sid) in table.items() if sid == root and pid != root}
    todo = [root, *found]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    found.discard(root)
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    if TRACKING:
        fields = _stat_fields(pid)
        return fields is not None and fields[0] != "Z"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def marked(predicate: Callable[[str], bool]) -> set[int]:
    """Live processes whose MARKER_VAR satisfies `predicate` (other users' unreadable: skipped)."""
    key = MARKER_VAR.encode() + b"="
    found = set()
    for pid in _pids():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        for entry in environ.split(b"\0"):
            if entry.startswith(key) and predicate(entry[len(key) :].decode(errors="replace")):
                if alive(pid):
                    found.add(pid)
                break
    return found


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def kill_tree(root: int, *, include_root: bool = True, group: bool = True) -> None:
    """Kill `root` (unless `include_root` is False: `root` may be gone, or be the caller), its
    process group (unless `group` is False) and everything `descendants` finds below it.

    The tree is frozen first (SIGSTOP, round by round until a round finds nothing new), so that
    nothing forks between finding the tree and killing it, then every process gets SIGKILL."""
    stopped: set[int] = set()
    if include_root:
        _signal([root], signal.SIGSTOP)
    if TRACKING:
        for _ in range(_FREEZE_ROUNDS):
            new = descendants(root) - stopped
            if not new:
                break
            _signal(new, signal.SIGSTOP)
            stopped |= new
    if group:  # a process group id, like a session id, is not reused while the group has members
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root, signal.SIGKILL)
    _signal(stopped, signal.SIGKILL)
    if include_root:
        _signal([root], signal.SIGKILL)


def kill_marked(predicate: Callable[[str], bool]) -> set[int]:
    """Kill (with their trees) the processes whose marker satisfies `predicate`; returns them."""
    found = marked(predicate) if TRACKING else set()
    for pid in found:
        kill_tree(pid, group=False)
    return found
