"""What a suite run is asked to do and how far it got: its configuration (RunConfig, with the checks
of its timeouts and job count), the (problem, GPU) pairs still pending in OUT/results.jsonl
(resumption), the order they start in beside other runs on one OUT (Schedule), the loop that claims
pairs and writes rows as they finish (drive), its statistics, and the progress bar its rows are
written under. Shared by the local runner (solar.kernelbench.runner) and the
Ray runner (solar.kernelbench.ray_runner)."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from solar.errors import UsageError
from solar.hardware import get_spec
from solar.kernelbench.problems import Problem
from solar.kernelbench.results import (
    FINAL_STATUSES,
    RESULTS_FILE,
    Claims,
    Row,
    RowWriter,
    SharedRows,
    locked,
)

#: the longest --timeout (a week): longer waits overflow the poll timeouts of the standard library.
MAX_TIMEOUT_S = 7 * 24 * 3600.0
#: statuses a run can be asked to redo (--retry-timeouts, --retry-errors).
RETRYABLE = ("timeout", "error")
#: how often a run waiting for pairs another run holds tries to claim them again.
POLL_S = 0.2


@dataclass(frozen=True)
class RunConfig:
    """What to analyse and how: `archs` maps canonical spec names to the names as given."""

    problems: tuple[Problem, ...]
    archs: dict[str, str]
    out: Path
    flags: tuple[str, ...] = ()
    jobs: int = 1
    timeout_s: float = 300.0
    force: bool = False
    isolation: str = "fork"
    retry: tuple[str, ...] = ()  # statuses redone although final (RETRYABLE)
    ray: str | None = None  # run the workers as Ray tasks: a cluster address, "" for a local one

    def __post_init__(self) -> None:
        check_jobs(self.jobs)
        check_seconds(self.timeout_s, "--timeout")
        unknown = sorted(set(self.retry) - set(RETRYABLE))
        if unknown:
            raise UsageError(
                f"cannot retry status {unknown[0]!r}; retryable: {', '.join(RETRYABLE)}"
            )


def check_seconds(value: float, flag: str) -> float:
    """`value` if it is a usable timeout: a finite number of seconds in (0, MAX_TIMEOUT_S]."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not (number and math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise UsageError(
            f"{flag} must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g} (a week), "
            f"got {value!r}"
        )
    return float(value)


def check_jobs(value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UsageError(f"--jobs must be a whole number of at least 1, got {value!r}")
    return value


@dataclass(frozen=True)
class RunStats:
    """What a run did: workers launched, (problem, arch) pairs skipped as done, rows written."""

    launched: int
    skipped: int
    written: int
    wall_seconds: float
    unreadable_lines: int


def resolve_archs(names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """{canonical spec name: name as given}; an unknown GPU is a SpecError now, not per problem."""
    archs: dict[str, str] = {}
    for name in names:
        archs.setdefault(get_spec(name).name, name)
    if not archs:
        raise UsageError("no GPU given; pass --arch NAME [NAME ...] (see `solar specs`)")
    return archs


def pending(
    config: RunConfig, done: dict[tuple[str, str], Row]
) -> list[tuple[Problem, dict[str, str]]]:
    """Each problem with the GPUs it still needs (all of them under --force)."""
    work = []
    for problem in config.problems:
        todo = {
            name: given
            for name, given in config.archs.items()
            if config.force
            or (row := done.get((problem.rel, name))) is None
            or row.status not in FINAL_STATUSES
            or row.status in config.retry
            or row.flags != config.flags
        }
        if todo:
            work.append((problem, todo))
    return work


@dataclass(frozen=True)
class Start:
    """A problem to analyse now on `archs` (claimed); `last`: none of its GPUs is left for later."""

    problem: Problem
    archs: dict[str, str]
    last: bool


class Schedule:
    """The pending pairs of a run (`work`, from results.jsonl as it was under its lock when the run
    started), handed out a problem at a time beside other runs on the same OUT: each pair is claimed
    (results.Claims) and looked up again in results.jsonl under its lock. A pair another run has
    finished since this one started is dropped (`taken_over`); one another run is analysing waits
    (`waiting`) and is tried again until its claim is free. Close to release them."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self._claims = Claims(config.out)
        self._rows = SharedRows(config.out / RESULTS_FILE)
        with locked(config.out):
            self._at_start = dict(self._rows.refresh())
        #: each problem with the GPUs it needed when the run started (resumption: `pending`)
        self.work = pending(config, self._at_start)
        #: (problem, GPU) pairs done before the run started
        self.skipped = len(config.problems) * len(config.archs) - sum(len(a) for _, a in self.work)
        self.unreadable = self._rows.unreadable  # lines of results.jsonl that are no row
        self._queue = deque((problem, dict(archs)) for problem, archs in self.work)
        self.taken_over = 0  # pairs another run finished while this one ran
        self.dropped = 0  # problems all of whose pending GPUs another run finished

    @property
    def waiting(self) -> bool:
        """Pairs are left that have not started (another run may hold them)."""
        return bool(self._queue)

    def _needed(self, key: tuple[str, str]) -> bool:
        """Still to do: its row is the one it had when the run started (pending then), or a newer
        row is no finished attempt with this run's flags."""
        row = self._rows.rows.get(key)
        if row is None or row == self._at_start.get(key):
            return True
        return row.status not in FINAL_STATUSES or row.flags != self.config.flags

    def next(self) -> Start | None:
        """The next problem with the GPUs this run may analyse now, None when every pair left is
        held by another run (or none is left)."""
        for _ in range(len(self._queue)):
            problem, archs = self._queue.popleft()
            held = [a for a in archs if self._claims.take((problem.rel, a))]
            if held:
                with locked(self.config.out):
                    self._rows.refresh()
            todo = {}
            for arch in held:
                if self._needed((problem.rel, arch)):
                    todo[arch] = archs[arch]
                else:
                    self._claims.release((problem.rel, arch))
                    self.taken_over += 1
            busy = {a: g for a, g in archs.items() if a not in held}
            if busy:
                self._queue.append((problem, busy))
            if todo:
                return Start(problem, todo, last=not busy)
            if not busy:
                self.dropped += 1
        return None

    def done(self, start: Start) -> None:
        """The rows of `start` are written: let its pairs go."""
        for arch in start.archs:
            self._claims.release((start.problem.rel, arch))

    def close(self) -> None:
        self._claims.release_all()
        self._rows.close()


def progress_bar(show: bool) -> Progress:
    """The run's progress bar on stderr (a no-op unless `show`)."""
    return Progress(
        TextColumn("[bold]analyse[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
        console=Console(stderr=True),
        disable=not show,
    )


def _note(row: Row) -> str:
    return f"{row.problem} [{row.arch}]: {row.status}" + (f" — {row.error}" if row.error else "")


def write_rows(writer: RowWriter, progress, rows, last: str, task, advance: int = 1) -> int:
    """Append one problem's rows (a note for each that is not ok) and advance the progress bar;
    returns how many rows were written."""
    for row in rows:
        writer.write(row)
        if row.status != "ok":
            progress.console.print(escape(_note(row)), highlight=False)
    progress.update(task, advance=advance, last=last)
    return len(rows)


def drive(
    schedule: Schedule,
    writer: RowWriter,
    progress,
    task,
    *,
    room: Callable[[], bool],
    submit: Callable[[Start], list[Row] | None],
    busy: Callable[[], bool],
    finished: Callable[[float | None], Iterable[tuple[Start, list[Row]]]],
) -> tuple[int, int]:
    """Claim problems from `schedule` while there is `room` and `submit` each (its rows at once when
    it cannot start, else None), write the rows of those `finished(timeout)` yields (timeout None:
    wait for one), and while pairs another run holds are waiting try them again every POLL_S
    seconds; until nothing is `busy` or waiting. Returns (problems submitted, rows written)."""
    launched = written = dropped = 0

    def write(item: Start, rows: list[Row]) -> None:
        nonlocal written
        written += write_rows(writer, progress, rows, item.problem.rel, task, int(item.last))
        schedule.done(item)

    while True:
        while room() and (item := schedule.next()) is not None:
            launched += 1
            rows = submit(item)
            if rows is not None:
                write(item, rows)
        progress.update(task, advance=schedule.dropped - dropped)
        dropped = schedule.dropped
        if not busy():
            if not schedule.waiting:
                return launched, written
            time.sleep(POLL_S)  # every pair left is another run's for now
            continue
        for item, rows in finished(POLL_S if schedule.waiting else None):
            write(item, rows)
