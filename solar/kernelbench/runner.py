"""Running the analysis of a whole suite: parallel workers, a progress bar, incremental results and
resumption (pairs already in results.jsonl with a final status and the same flags are skipped,
unless their status is one the run retries: --retry-timeouts, --retry-errors; solar.kernelbench.plan).
Runs on one OUT at once share it: each starts only pairs no other run holds (plan.Schedule).

A run that is stopped (a signal turned into an exception by solar.kernelbench.signals, or any error)
kills every worker and the fork server, keeps the rows written so far and removes its folders."""

from __future__ import annotations

import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from solar.kernelbench.plan import RunConfig, RunStats, Schedule, Start, drive, progress_bar
from solar.kernelbench.ray_runner import run_on_ray
from solar.kernelbench.results import RESULTS_FILE, RowWriter, compact
from solar.kernelbench.worker import analyze_problem
from solar.kernelbench.workerset import WorkerSet
from solar.kernelbench.zygote import start_server, stop_server


def _stop(workers: WorkerSet, pool: ThreadPoolExecutor, futures: dict, server: bool) -> None:
    """Kill every worker and wait for the worker threads; with `server`, kill the fork server
    until no thread is left (a thread waiting for the server to fork returns when it dies, and one
    that started a new server just before it saw the run stopped must not leave it running)."""
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
    finish, then rewrite the file with one row per pair (its unreadable lines set aside, said on
    stderr).

    On any exception (Ctrl-C, SIGTERM, a rejected flag) every worker and the fork server are killed
    before it propagates; the rows written so far stay in the file."""
    if config.ray is not None:
        return run_on_ray(config, show_progress)
    path = config.out / RESULTS_FILE
    start = time.perf_counter()
    schedule = Schedule(config)
    work = schedule.work
    with (
        WorkerSet() as workers,
        progress_bar(show_progress) as progress,
        RowWriter(path) as writer,
    ):
        task = progress.add_task("analyse", total=len(work), last="")
        if work and config.isolation == "fork":
            start_server()  # from this thread, so that stopping it is not raced by a worker thread
        pool = ThreadPoolExecutor(max_workers=config.jobs)
        running: dict[Future, Start] = {}

        def submit(item: Start) -> None:
            args = (item.problem, item.archs, config.flags, config.timeout_s, config.isolation, workers)
            running[pool.submit(analyze_problem, *args)] = item

        def finished(timeout: float | None):
            done, _ = wait(running, timeout=timeout, return_when=FIRST_COMPLETED)
            for future in done:
                yield running.pop(future), future.result()

        try:
            launched, written = drive(schedule, writer, progress, task, room=lambda: len(running) < config.jobs,
                                      submit=submit, busy=lambda: bool(running), finished=finished)
        except BaseException as exc:  # a signal or a rejected flag: stop every worker, keep the rows
            # a signal also ends the fork server (an error leaves it idle, warm for the next run)
            signalled = not isinstance(exc, Exception)
            _stop(workers, pool, running, server=config.isolation == "fork" and signalled)
            raise
        finally:
            schedule.close()
        pool.shutdown(wait=True)
    note = compact(path).note()
    if note:
        print(f"note: {note}", file=sys.stderr)
    return RunStats(
        launched, schedule.skipped + schedule.taken_over, written, time.perf_counter() - start, schedule.unreadable
    )
