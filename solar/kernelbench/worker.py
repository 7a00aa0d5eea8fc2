"""Running one problem in a process of its own: `solar analyze FILE --arch ... --json`, either forked
from a warm fork server (solar.kernelbench.zygote, the default) or as a fresh
`python -m solar.cli analyze ...` subprocess.

A crash or a hang costs that problem's rows and nothing else. Every worker runs under a supervisor
(solar.kernelbench.supervise) in a session of its own, with an environment marker unique to it; at
its timeout, or when the run is stopped, the supervisor's whole tree is frozen and killed
(solar.kernelbench.procs), grandchildren that called `setsid` included. Output goes to files, never
pipes, so nothing waits for a pipe that a stray descendant holds open. The outcome is classified into
result rows.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from solar.errors import UsageError
from solar.kernelbench.problems import Problem
from solar.kernelbench.procs import MARKER_VAR, SAFE_PATH
from solar.kernelbench.results import Row, report_fields
from solar.kernelbench.workerset import Outcome, WorkerSet, after_worker, read_output, stop_worker
from solar.kernelbench.zygote import run_forked

#: the one-line error of `solar analyze` for an op without a lowering names the op right after this.
_UNSUPPORTED = re.compile(r"unsupported op (\S+)")
#: `solar`'s argument parser ends its one-line errors so: a bad flag passed through, not a problem.
_USAGE = re.compile(r"\(see `[^`]*--help`\)\s*$")
_ERROR_PREFIX = "solar: error: "
_MAX_MESSAGE = 400
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding the solar package


def solar_command(*args: str) -> list[str]:
    """The command line running the `solar` CLI of this installation with this interpreter."""
    return [sys.executable, "-m", "solar.cli", *args]


def supervised(command: list[str]) -> list[str]:
    """`command` under a supervisor that leaves nothing of it running (kernelbench.supervise)."""
    return [sys.executable, "-m", "solar.kernelbench.supervise", "--", *command]


def _env(marker: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    env[MARKER_VAR] = marker
    env.update(SAFE_PATH)
    return env


def run_command(command: list[str], timeout_s: float, workers: WorkerSet) -> Outcome:
    """Run `command` supervised, in a session of its own; after `timeout_s` seconds kill it and
    everything it started. Its output is read from files once it is gone."""
    marker = workers.marker()
    with workers.workdir() as tmp:
        out, err = tmp / "stdout", tmp / "stderr"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            start = time.perf_counter()
            proc = subprocess.Popen(
                supervised(command),
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
                env=_env(marker),
            )
        try:
            workers.add(proc.pid, marker)
            try:
                returncode: int | None = proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                returncode = None
                stop_worker(proc.pid, marker)
                proc.wait()
        except BaseException:  # stopped (a signal in this thread): leave nothing running
            stop_worker(proc.pid, marker)
            proc.wait()
            raise
        finally:
            workers.discard(proc.pid)
        after_worker(proc.pid, marker, returncode)
        seconds = time.perf_counter() - start
        return Outcome(returncode, read_output(out), read_output(err), seconds)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def failure_message(outcome: Outcome, timeout_s: float) -> str:
    """One line saying why a worker gave no result: solar's own error line, the last line of a
    traceback, the signal that killed it, or the timeout."""
    if outcome.returncode is None:
        return f"no result within the {timeout_s:g} s timeout; the worker was killed"
    lines = [ln for ln in outcome.stderr.splitlines() if ln.strip()]
    solar_lines = [ln for ln in lines if ln.startswith(_ERROR_PREFIX)]
    if solar_lines:
        return _clip(solar_lines[-1][len(_ERROR_PREFIX) :])
    if outcome.returncode < 0:
        try:
            name = signal.Signals(-outcome.returncode).name
        except ValueError:
            name = f"signal {-outcome.returncode}"
        said = f": {lines[-1]}" if lines else ""
        return _clip(f"the worker was killed by {name}{said}")
    if lines:
        return _clip(f"the worker exited with status {outcome.returncode}: {lines[-1]}")
    return f"the worker exited with status {outcome.returncode} and printed nothing"


def parse_json(stdout: str) -> Any:
    """The JSON a worker printed (anything printed before it is skipped)."""
    text = stdout.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # something printed before the JSON: start at its first line
        for match in re.finditer(r"^[\[{]", text, re.MULTILINE):
            try:
                return json.loads(text[match.start() :])
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON in the worker's output")


def parse_reports(stdout: str) -> list[dict[str, Any]]:
    """The report objects of `solar analyze --json`: one object, or a list of them."""
    data = parse_json(stdout)
    reports = data if isinstance(data, list) else [data]
    if not all(isinstance(r, dict) and "arch" in r for r in reports):
        raise ValueError("the worker's JSON is not a list of reports with an `arch`")
    return reports


def classify(
    problem: Problem,
    archs: tuple[str, ...],
    outcome: Outcome,
    flags: tuple[str, ...],
    timeout_s: float,
) -> list[Row]:
    """Rows (one per arch, canonical spec names) for one worker's outcome.

    Raises UsageError when the worker rejected the flags it was given: every problem would fail
    the same way, so the run stops instead of recording that as the problems' result."""
    common = {
        "problem": problem.rel,
        "level": problem.level,
        "seconds": outcome.seconds,
        "flags": flags,
    }
    if outcome.returncode is None:
        message = failure_message(outcome, timeout_s)
        return [Row(arch=a, status="timeout", error=message, **common) for a in archs]
    if outcome.returncode != 0:
        message = failure_message(outcome, timeout_s)
        if outcome.returncode == 2 and _USAGE.search(message):
            raise UsageError(f"the per-problem `solar analyze` rejected its arguments: {message}")
        unsupported = _UNSUPPORTED.search(message)
        status = "unsupported" if unsupported else "error"
        op = unsupported.group(1) if unsupported else None
        return [
            Row(arch=a, status=status, op=op, error=message, exit_code=outcome.returncode, **common)
            for a in archs
        ]
    try:
        by_arch = {r["arch"]: r for r in parse_reports(outcome.stdout)}
    except ValueError as exc:
        return [Row(arch=a, status="error", error=str(exc), exit_code=0, **common) for a in archs]
    rows = []
    for arch in archs:
        report = by_arch.get(arch)
        if report is None:
            rows.append(
                Row(
                    arch=arch,
                    status="error",
                    error=f"the worker printed no report for {arch}",
                    exit_code=0,
                    **common,
                )
            )
            continue
        rows.append(
            Row(
                arch=arch,
                status="ok",
                exit_code=0,
                **report_fields(report),
                **common,
            )
        )
    return rows


#: how workers are started: forked from a warm fork server, or a fresh interpreter each.
ISOLATION = ("fork", "subprocess")


def run_solar(argv: list[str], timeout_s: float, isolation: str, workers: WorkerSet) -> Outcome:
    """Run `solar ARGV` in a worker process with a timeout."""
    if isolation == "subprocess":
        return run_command(solar_command(*argv), timeout_s, workers)
    if isolation != "fork":
        raise UsageError(f"unknown isolation {isolation!r}; use one of: {', '.join(ISOLATION)}")
    return run_forked(argv, timeout_s, workers)


def analyze_problem(
    problem: Problem,
    archs: dict[str, str],
    flags: tuple[str, ...],
    timeout_s: float,
    isolation: str,
    workers: WorkerSet,
) -> list[Row]:
    """Analyse one problem for GPUs `archs` ({canonical name: name as given}) in a worker process."""
    # The runner enforces `timeout_s` on the whole worker; the analysis' own clock is turned off so
    # that a longer batch timeout is not cut short by `solar analyze`'s default.
    argv = ["analyze", str(problem.path), "--arch", *archs.values(), "--json", "--timeout", "0", *flags]
    outcome = run_solar(argv, timeout_s, isolation, workers)
    return classify(problem, tuple(archs), outcome, flags, timeout_s)
