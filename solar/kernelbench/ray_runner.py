"""Running a suite's workers as Ray tasks (`--ray [ADDRESS]`): the same pending (problem, GPU) pairs,
the same per-problem worker process with its timeout (solar.kernelbench.worker, run inside the task),
the same rows streamed into OUT/results.jsonl as tasks finish, so a re-run resumes, and the same
claims beside other runs on one OUT (solar.kernelbench.plan.Schedule).

Each task carries the problem's source text (a KernelBench problem and a generated definition problem
are single files) and writes it under the task's own temporary folder at the same relative path, so
that a node needs solar installed but no shared file system. A task asks for one CPU; a task whose
Ray worker dies, or that raises, becomes an `error` row for its problem (redo with --retry-errors).
`--measure` schedules `solar validate` tasks that ask for one GPU each and record the node and GPU
that ran them. Ray is an optional dependency (`pip install 'solar-sol[ray]'`)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from solar.errors import UsageError
from solar.kernelbench.measure import MEASURED_FILE, MeasureStats, measured_problems
from solar.kernelbench.plan import RunConfig, RunStats, Schedule, Start, drive, progress_bar
from solar.kernelbench.problems import Problem
from solar.kernelbench.results import RESULTS_FILE, Row, RowWriter, compact
from solar.kernelbench.worker import analyze_problem, failure_message, parse_json, run_solar
from solar.kernelbench.workerset import WorkerSet


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'solar-sol[ray]' (or pip install ray)") from None
    return ray


def connect(address: str) -> bool:
    """Join the Ray cluster at `address` ('' : start a local one); True when this call started Ray
    (and so should shut it down). An already initialised Ray (a test's ray.init) is used as it is."""
    ray = _ray()
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address or None, log_to_driver=False, include_dashboard=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        shown = address or "a local cluster"
        raise UsageError(f"--ray {shown}: cannot start or join the Ray cluster ({' '.join(str(exc).split())[:200]}); check the address (ray start --head prints it)") from None
    return True


def _materialise(rel: str, source: str, folder: str) -> Path:
    path = Path(folder, *Path(rel).parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return path


def analyze_task(
    rel: str, level: int | None, source: str, archs: dict[str, str], flags: tuple[str, ...],
    timeout_s: float, isolation: str,
) -> list[dict]:
    """One problem on a Ray worker: its own worker process with its timeout, as the local runner."""
    with tempfile.TemporaryDirectory(prefix="solar-ray-") as tmp, WorkerSet() as workers:
        path = _materialise(rel, source, tmp)
        rows = analyze_problem(Problem(rel, level, path), archs, flags, timeout_s, isolation, workers)
    return [r.model_dump(mode="json") for r in rows]


def _failed(problem: Problem, archs: dict[str, str], flags: tuple[str, ...], message: str, seconds: float) -> list[Row]:
    return [
        Row(problem=problem.rel, level=problem.level, arch=a, status="error", error=message, seconds=seconds, flags=flags)
        for a in archs
    ]


def _ray_failure(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"the Ray task failed ({type(exc).__name__}): {text[:300]}"


@contextlib.contextmanager
def _tasks(ray: Any, started: bool):
    """A dict for the refs of submitted tasks: on an error or a signal the tasks left are cancelled
    (rows already written are kept); Ray is shut down when this run started it."""
    refs: dict = {}
    try:
        yield refs
    except BaseException:
        for ref in refs:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()


def _finished(ray: Any, refs: dict, timeout: float | None):
    """(what a task was submitted with, its result or None, None or its failure as one line) for
    the tasks that finish within `timeout` seconds (None: at least one)."""
    ready, _ = ray.wait(list(refs), num_returns=1, timeout=timeout)
    for ref in ready:
        key = refs.pop(ref)
        try:
            result = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the worker died, or the task raised
            yield key, None, _ray_failure(exc)
        else:
            yield key, result, None


def _every_finished(ray: Any, refs: dict):
    """`_finished` until no task is left."""
    while refs:
        yield from _finished(ray, refs, None)


def run_on_ray(config: RunConfig, show_progress: bool = True) -> RunStats:
    """run_analysis with the workers as Ray tasks (see the module docstring)."""
    ray = _ray()
    path = config.out / RESULTS_FILE
    start = time.perf_counter()
    schedule = Schedule(config)
    work = schedule.work
    try:
        started = connect(config.ray or "")
        remote = ray.remote(num_cpus=1, max_retries=0)(analyze_task)
        with _tasks(ray, started) as refs, progress_bar(show_progress) as progress, RowWriter(path) as writer:
            task = progress.add_task("analyse", total=len(work), last="")

            def submit(item: Start) -> list[Row] | None:
                p = item.problem
                try:
                    source = p.path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    return _failed(p, item.archs, config.flags, f"{p.rel}: cannot read the problem file ({exc})", 0.0)
                ref = remote.remote(p.rel, p.level, source, item.archs, config.flags, config.timeout_s, config.isolation)
                refs[ref] = (item, time.perf_counter())
                return None

            def finished(timeout: float | None):
                for (item, submitted), result, failure in _finished(ray, refs, timeout):
                    if failure is None:
                        yield item, [Row.model_validate(r) for r in result]
                    else:
                        yield item, _failed(item.problem, item.archs, config.flags, failure, time.perf_counter() - submitted)

            launched, written = drive(schedule, writer, progress, task, room=lambda: True, submit=submit,
                                      busy=lambda: bool(refs), finished=finished)
    finally:
        schedule.close()
    note = compact(path).note()
    if note:
        print(f"note: {note}", file=sys.stderr)
    return RunStats(
        launched, schedule.skipped + schedule.taken_over, written, time.perf_counter() - start, schedule.unreadable
    )


# ---- --measure on a cluster: one `solar validate` per problem on a GPU of its own --------------


def validate_task(rel: str, source: str, timeout_s: float) -> dict:
    """`solar validate FILE --json` on the GPU Ray gave this task, with where it ran."""
    import ray

    context = ray.get_runtime_context()
    where = {
        "node": context.get_node_id(),
        "host": socket.gethostname(),
        "gpu_ids": [str(g) for g in ray.get_gpu_ids()],
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    with tempfile.TemporaryDirectory(prefix="solar-ray-") as tmp, WorkerSet() as workers:
        path = _materialise(rel, source, tmp)
        outcome = run_solar(["validate", str(path), "--json"], timeout_s, "subprocess", workers)
    if outcome.returncode == 0:
        try:
            return {"records": parse_json(outcome.stdout), **where}
        except ValueError:
            return {"error": "no JSON from validate", **where}
    return {"error": failure_message(outcome, timeout_s), **where}


def measure_on_ray(problems: list[Problem], out: Path, timeout_s: float, force: bool, address: str):
    """measure_suite on a Ray cluster: problems already measured in OUT/measured.jsonl are skipped;
    every record gets `node`, `host` and `gpu_ids` of the task that timed it."""
    ray = _ray()
    started = connect(address)
    path = out / MEASURED_FILE
    done = set() if force else measured_problems(path)
    if not ray.cluster_resources().get("GPU"):
        if started:
            ray.shutdown()
        return MeasureStats(0, 0, len(done), "the Ray cluster has no GPUs (ray start --num-gpus N on the GPU nodes)")
    remote = ray.remote(num_gpus=1, num_cpus=1, max_retries=0)(validate_task)
    measured = failed = 0
    with _tasks(ray, started) as refs, path.open("a", encoding="utf-8") as file:
        for p in problems:
            if p.rel not in done:
                refs[remote.remote(p.rel, p.path.read_text(encoding="utf-8"), timeout_s)] = p
        for p, result, failure in _every_finished(ray, refs):
            result = {"error": failure} if result is None else result
            where = {k: result[k] for k in ("node", "host", "gpu_ids", "cuda_visible_devices") if k in result}
            records = result.get("records")
            if records is None:
                failed += 1
                file.write(json.dumps({"problem": p.rel, "status": "error", "error": result.get("error"), **where}) + "\n")
            else:
                measured += 1
                for record in records if isinstance(records, list) else [records]:
                    if isinstance(record, dict):
                        file.write(json.dumps({**record, "problem": p.rel, **where}) + "\n")
            file.flush()
    return MeasureStats(measured, failed, len(done), None)
