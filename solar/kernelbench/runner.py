"""Running the analysis of a whole suite: parallel workers, a progress bar, incremental results and
resumption (pairs already in results.jsonl with a final status and the same flags are skipped)."""

from __future__ import annotations

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
from solar.kernelbench.worker import ProcessGroups, analyze_problem


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
            or row.flags != config.flags
        }
        if todo:
            work.append((problem, todo))
    return work


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


def run_analysis(config: RunConfig, show_progress: bool = True) -> RunStats:
    """Analyse every pending (problem, arch) pair, appending rows to OUT/results.jsonl as workers
    finish, then rewrite the file with one row per pair."""
    from rich.markup import escape

    if config.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {config.jobs}")
    if config.timeout_s <= 0:
        raise UsageError(f"--timeout must be positive, got {config.timeout_s:g}")
    path = config.out / RESULTS_FILE
    done, bad = read_rows(path)
    work = pending(config, done)
    skipped = len(config.problems) * len(config.archs) - sum(len(archs) for _, archs in work)
    start = time.perf_counter()
    written = 0
    groups = ProcessGroups()
    with _progress(show_progress) as progress, RowWriter(path) as writer:
        task = progress.add_task("analyse", total=len(work), last="")
        pool = ThreadPoolExecutor(max_workers=config.jobs)
        futures: dict[Future, Problem] = {
            pool.submit(
                analyze_problem,
                problem,
                archs,
                config.flags,
                config.timeout_s,
                config.isolation,
                groups,
            ): problem
            for problem, archs in work
        }
        try:
            remaining = set(futures)
            while remaining:
                finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                for future in finished:
                    rows = future.result()
                    for row in rows:
                        writer.write(row)
                        written += 1
                        if row.status != "ok":
                            progress.console.print(escape(_note(row)), highlight=False)
                    progress.update(task, advance=1, last=futures[future].rel)
        except BaseException:  # Ctrl-C or a rejected flag: stop every worker, keep what is written
            for future in futures:
                future.cancel()
            groups.kill_all()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    compact(path)
    return RunStats(len(work), skipped, written, time.perf_counter() - start, bad)
