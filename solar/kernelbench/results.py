"""One result row per (problem, GPU) and the OUT/results.jsonl file that every run on one OUT shares.

Rows are appended as problems finish (an interrupted run keeps what it did); the last row of a pair
wins. Concurrent runs share the file through OS locks (fcntl.flock, OUT/.locks/) rather than per-run
staging files, so a row is in results.jsonl as soon as it is written and a killed run's locks die with
it: each append and each compaction holds `results.lock` and an append reopens the file (never a file a
compaction replaced), and a run claims each (problem, GPU) it analyses (Claims). Lines that are not
rows go to results.jsonl.bad at compaction, never dropped; a write that fails (a full disk) is one line.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from solar.errors import UsageError
from solar.kernelbench.problems import natural_key
from solar.report.model import OpReport

Status = Literal["ok", "unsupported", "error", "timeout"]
#: statuses of a finished attempt: a resumed run skips pairs that have one.
FINAL_STATUSES: tuple[str, ...] = ("ok", "unsupported", "error", "timeout")
RESULTS_FILE = "results.jsonl"
ROW_OPS = 10  # the slowest ops a row keeps for the report (all of them would grow the file a lot)
ROW_FIXES = 3  # the "what to fix first" items a row keeps
#: where compaction keeps the lines of results.jsonl that are not rows.
BAD_FILE = "results.jsonl.bad"
#: OUT's lock folder: `results.lock` (appends, compaction) and one `.claim` per pair being analysed.
LOCKS_DIR = ".locks"
_RESULTS_LOCK = "results.lock"
#: what a write that failed for want of space says, by errno (other failures: the system's words).
DISK_FULL = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded"}


class Row(BaseModel):
    """The outcome of analysing one problem for one GPU.

    `totals` and `bounds` are `solar analyze --json`'s objects as printed (so bound levels added to
    solar later, such as `cache_aware`, pass through). `seconds` is the wall time of the worker
    subprocess, which analysed every GPU of the run at once (imports included). `flags` are the
    analysis flags it ran with; a resumed run redoes pairs that ran with other flags. `ops` are
    the ROW_OPS slowest of the program's `op_count` ops and `fixes` its first opportunities, as
    the JSON prints them (report_fields)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    problem: str
    level: int | None
    arch: str
    status: Status
    op: str | None = None
    error: str | None = None
    seconds: float
    flags: tuple[str, ...] = ()
    exit_code: int | None = None
    totals: dict[str, Any] | None = None
    bounds: dict[str, dict[str, Any]] | None = None
    assumptions: tuple[str, ...] = ()
    ops: tuple[dict[str, Any], ...] = ()
    op_count: int | None = None
    fixes: tuple[dict[str, Any], ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.problem, self.arch)

    def bound_seconds(self, level: str) -> float | None:
        """Seconds of bound `level` (fused, unfused, cache_aware, ...), None when absent."""
        bound = (self.bounds or {}).get(level)
        return None if bound is None else float(bound["seconds"])

    def total(self, name: str) -> float | None:
        value = (self.totals or {}).get(name)
        return None if value is None else float(value)


def report_fields(report: dict[str, Any]) -> dict[str, Any]:
    """A row's fields from one `solar analyze --json` report: totals, bounds and assumptions as
    printed; the ROW_OPS slowest ops, each with its headline einsum line only; the first ROW_FIXES
    opportunities. Ops of a shape this solar does not read (another version's worker) are left
    out, as rows of an older solar have none."""
    fields = {
        "totals": report.get("totals"),
        "bounds": report.get("bounds"),
        "assumptions": tuple(report.get("assumptions", ())),
    }
    try:
        ops = [OpReport.model_validate(op) for op in report.get("ops", ())]
    except ValidationError:
        return fields
    slowest = sorted(ops, key=lambda op: -op.seconds)[:ROW_OPS]
    insights = report.get("insights") or {}
    return {
        **fields,
        "ops": tuple(
            op.model_copy(
                update={"einsum": [op.headline] if op.einsum else [], "contractions": []}
            ).model_dump(mode="json")
            for op in slowest
        ),
        "op_count": len(ops),
        "fixes": tuple(insights.get("opportunities", ())[:ROW_FIXES]),
    }


def _parse(data: bytes, rows: dict[tuple[str, str], Row], bad: list[bytes]) -> None:
    """Add the rows of JSON Lines `data` to `rows` (the last per pair wins), unreadable lines to `bad`."""
    for line in data.split(b"\n"):  # a line, byte for byte (set aside as it was)
        if not line.strip():
            continue
        try:
            row = Row.model_validate(json.loads(line.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, RecursionError, ValidationError):  # ValueError: JSON, digits
            bad.append(line)
            continue
        rows[row.key] = row


def read_rows(path: Path) -> tuple[dict[tuple[str, str], Row], int]:
    """The latest row per (problem, arch) in a results file, and the number of unreadable lines
    (not UTF-8, not JSON, not a row)."""
    rows: dict[tuple[str, str], Row] = {}
    bad: list[bytes] = []
    if path.is_file():
        _parse(path.read_bytes(), rows, bad)
    return rows, len(bad)


def sorted_rows(rows: dict[tuple[str, str], Row] | list[Row]) -> list[Row]:
    values = rows.values() if isinstance(rows, dict) else rows
    return sorted(values, key=lambda r: (natural_key(r.problem), r.arch))


# ---- writing OUT's files: whole or appended, a failure one line --------------------------------


def write_failed(path: Path, exc: OSError) -> UsageError:
    """The one line for an OUT file that could not be written: which file, why, and that the rows
    already written are kept (a re-run resumes from them)."""
    why = DISK_FULL.get(exc.errno) or exc.strerror or type(exc).__name__
    results = path.parent / RESULTS_FILE
    try:
        count = len(read_rows(results)[0]) if results.is_file() else None
    except OSError:
        count = None
    if count is None:
        kept = "the rows already written are kept"
    elif count == 0:
        kept = f"no row was in {results} yet"
    else:
        kept = f"the {count} row{'' if count == 1 else 's'} in {results} {'is' if count == 1 else 'are'} kept"
    then = "free space" if exc.errno in DISK_FULL else "make it writable or pass another --out"
    return UsageError(f"{path}: cannot write it: {why}; {kept} ({then}, then run the same command again)")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_file(path: Path, text: str) -> None:
    """Write a file of OUT whole: a temporary file beside it, renamed over it once complete, so that
    a full disk leaves the previous file (or none), never a part of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            _write_all(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_failed(path, exc) from None


def _append(path: Path, data: bytes) -> None:
    """Append to `path` (ending a line a killed writer left unfinished first); call under the lock."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        _write_all(fd, data)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold OUT's results lock (exclusive) for the block: every append and compaction does."""
    folder = out / LOCKS_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / _RESULTS_LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise write_failed(folder / _RESULTS_LOCK, exc) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class RowWriter:
    """Appends rows to a results file, one JSON object per line, each under OUT's results lock."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, row: Row) -> None:
        with locked(self.path.parent):
            try:
                _append(self.path, (row.model_dump_json() + "\n").encode("utf-8"))
            except OSError as exc:
                raise write_failed(self.path, exc) from None

    def close(self) -> None:
        pass

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Compacted:
    """A compacted results file: its rows in natural order, and how many unreadable lines were
    moved to `bad_file`."""

    rows: list[Row]
    set_aside: int
    bad_file: Path

    def note(self) -> str | None:
        """The one line saying where the unreadable lines went (None when there were none)."""
        if not self.set_aside:
            return None
        return f"{self.set_aside} unreadable lines of {self.bad_file.parent / RESULTS_FILE} moved to {self.bad_file}"


def compact(path: Path) -> Compacted:
    """Rewrite a results file with only the latest row per pair, in natural order (atomically, under
    the lock); its unreadable lines are appended to BAD_FILE beside it."""
    bad_file = path.with_name(BAD_FILE)
    with locked(path.parent):
        rows: dict[tuple[str, str], Row] = {}
        bad: list[bytes] = []
        if path.is_file():
            _parse(path.read_bytes(), rows, bad)
        if bad:
            try:
                _append(bad_file, b"".join(line + b"\n" for line in bad))
            except OSError as exc:
                raise write_failed(bad_file, exc) from None
        ordered = sorted_rows(rows)
        write_file(path, "".join(r.model_dump_json() + "\n" for r in ordered))
    return Compacted(ordered, len(bad), bad_file)


class SharedRows:
    """The rows of a results file as other runs add them: `refresh` (call it under the lock) reads
    only what was appended since the last call, all of it again after a compaction replaced the file (the file
    read is kept open, so its inode number cannot be reused for the new one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: dict[tuple[str, str], Row] = {}
        self.unreadable = 0  # lines that are no row
        self._file: BinaryIO | None = None
        self._offset = 0

    def refresh(self) -> dict[tuple[str, str], Row]:
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            self.close()
            self.rows, self.unreadable = {}, 0
            return self.rows
        if self._file is None or os.fstat(self._file.fileno()).st_ino != now.st_ino:
            self.close()
            self._file = self.path.open("rb")
            self.rows, self.unreadable, self._offset = {}, 0, 0
        self._file.seek(self._offset)
        data = self._file.read()
        bad: list[bytes] = []
        _parse(data, self.rows, bad)  # under the lock: no line is being written
        self.unreadable += len(bad)
        self._offset += len(data)
        return self.rows

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Claims:
    """The (problem, GPU) pairs this run is analysing, each held as an exclusive lock on a file of
    its own in OUT/.locks/ (taken without waiting: a pair another run holds is not taken). A released
    claim's file is removed; a taken lock counts only if its file is still the one at the path."""

    def __init__(self, out: Path) -> None:
        self.folder = out / LOCKS_DIR
        self._held: dict[tuple[str, str], int] = {}

    def _path(self, key: tuple[str, str]) -> Path:
        digest = hashlib.sha256("\n".join(key).encode("utf-8")).hexdigest()[:24]
        return self.folder / f"{digest}.claim"

    def take(self, key: tuple[str, str]) -> bool:
        path = self._path(key)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise write_failed(path, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = None
        if current != os.fstat(fd).st_ino:  # its holder removed it as we opened it: try afresh
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            return self.take(key)
        self._held[key] = fd
        return True

    def release(self, key: tuple[str, str]) -> None:
        fd = self._held.pop(key, None)
        if fd is None:
            return
        with contextlib.suppress(OSError):
            self._path(key).unlink()
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def release_all(self) -> None:
        for key in list(self._held):
            self.release(key)
