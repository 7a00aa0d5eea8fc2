"""Running the analysis of a whole suite: parallel workers, a progress bar, incremental results and
resumption (pairs already in results.jsonl with a final status and the same flags are skipped,
unless their status is one the run retries: --retry-timeouts, --retry-errors).

A run that is stopped (a signal turned into an exception by solar.kernelbench.signals, or any error)
kills every worker and the fork server, keeps the rows written so far and removes its folders."""

from __future__ import annotations

import math
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from solar.errors import UsageError
from solar.kernelbench.problems import Problem
from solar.kernelbench.results import (
    FINAL_STATUSES,
    RESULTS_FILE,
    Row,
    RowWriter,
    compact,
    read_rows,
)
from solar.kernelbench.worker import WorkerSet, analyze_problem

#: the longest --timeout (a week): longer waits overflow the poll timeouts of the standard library.
MAX_TIMEOUT_S = 7 * 24 * 3600.0
#: statuses a run can be asked to redo (--retry-timeouts, --retry-errors).
RETRYABLE = ("timeout", "error")


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
    from solar.hardware import get_spec

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


def resume(config: RunConfig) -> tuple[Path, list[tuple[Problem, dict[str, str]]], int, int]:
    """The results file, each problem with the GPUs it still needs (`pending`), how many (problem,
    GPU) pairs the file already holds, and how many of its lines are unreadable (`read_rows`)."""
    path = config.out / RESULTS_FILE
    done, bad = read_rows(path)
    work = pending(config, done)
    skipped = len(config.problems) * len(config.archs) - sum(len(archs) for _, archs in work)
    return path, work, skipped, bad


def _progress(show: bool):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

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


def write_rows(writer: RowWriter, progress, rows, last: str, task) -> int:
    """Append one problem's rows (a note for each that is not ok) and advance the progress bar;
    returns how many rows were written."""
    from rich.markup import escape

    for row in rows:
        writer.write(row)
        if row.status != "ok":
            progress.console.print(escape(_note(row)), highlight=False)
    progress.update(task, advance=1, last=last)
    return len(rows)


def _stop(workers: WorkerSet, pool: ThreadPoolExecutor, futures: dict, server: bool) -> None:
    """Kill every worker and wait for the worker threads; with `server`, kill the fork server
    until no thread is left (a thread waiting for the server to fork returns when it dies, and one
    that started a new server just before it saw the run stopped must not leave it running)."""
    from solar.kernelbench.zygote import stop_server

    workers.stop()
    for future in futures:
        future.cancel()
    left = set(futures)
    while left:
        if server:
            stop_server()
        _, left = wait(left, timeout=0.2)
    pool.shutdown(wait=True)
    if server:
        stop_server()


def run_analysis(config: RunConfig, show_progress: bool = True) -> RunStats:
    """Analyse every pending (problem, arch) pair, appending rows to OUT/results.jsonl as workers
    finish, then rewrite the file with one row per pair.

    On any exception (Ctrl-C, SIGTERM, a rejected flag) every worker and the fork server are killed
    before it propagates; the rows written so far stay in the file."""
    if config.ray is not None:
        from solar.kernelbench.ray_runner import run_on_ray

        return run_on_ray(config, show_progress)
    from solar.kernelbench.zygote import start_server

    path, work, skipped, bad = resume(config)
    start = time.perf_counter()
    written = 0
    with (
        WorkerSet() as workers,
        _progress(show_progress) as progress,
        RowWriter(path) as writer,
    ):
        task = progress.add_task("analyse", total=len(work), last="")
        if work and config.isolation == "fork":
            start_server()  # from this thread, so that stopping it is not raced by a worker thread
        pool = ThreadPoolExecutor(max_workers=config.jobs)
        futures: dict[Future, Problem] = {}
        try:
            for problem, archs in work:
                future = pool.submit(
                    analyze_problem,
                    problem,
                    archs,
                    config.flags,
                    config.timeout_s,
                    config.isolation,
                    workers,
                )
                futures[future] = problem
            remaining = set(futures)
            while remaining:
                finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                for future in finished:
                    written += write_rows(writer, progress, future.result(), futures[future].rel, task)
        except BaseException as exc:  # a signal or a rejected flag: stop every worker, keep the rows
            # a signal also ends the fork server (an error leaves it idle, warm for the next run)
            signalled = not isinstance(exc, Exception)
            _stop(workers, pool, futures, server=config.isolation == "fork" and signalled)
            raise
        pool.shutdown(wait=True)
    compact(path)
    return RunStats(len(work), skipped, written, time.perf_counter() - start, bad)
