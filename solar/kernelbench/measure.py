"""`--measure`: time each problem on this machine's CUDA GPU with `solar validate FILE --json`, one
subprocess per problem, one at a time (timings must not share the GPU). The records go to
OUT/measured.jsonl (each with its `problem` set to the path relative to ROOT) and are read back like
any --measured file. A failure that is the machine's, not the problem's (no CUDA, no `validate`
command), stops the measuring and is reported once."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from solar.kernelbench.measured import MEASURED_KEYS, first_value, seconds_of
from solar.kernelbench.problems import Problem
from solar.kernelbench.worker import failure_message, parse_json, run_solar
from solar.kernelbench.workerset import WorkerSet

MEASURED_FILE = "measured.jsonl"
#: messages saying the machine cannot measure at all (rather than that one problem failed).
_MACHINE_FAILURE = re.compile(r"cuda|no gpu|nvidia|invalid choice", re.IGNORECASE)


@dataclass(frozen=True)
class MeasureStats:
    measured: int
    failed: int
    skipped: int
    stopped: str | None  # why measuring stopped early (no CUDA...), None when it did not

    def note(self) -> str:
        text = f"{self.measured} problems measured, {self.failed} failed, {self.skipped} already measured"
        return text + (f"; stopped: {self.stopped}" if self.stopped else "")


def _has_time(record: dict) -> bool:
    measured = first_value(record, MEASURED_KEYS)
    if isinstance(measured, dict):
        return any(seconds_of(v) for v in measured.values())
    return seconds_of(record) is not None


def measured_problems(path: Path) -> set[str]:
    """Problems that already have a measured time in OUT/measured.jsonl."""
    done: set[str] = set()
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and _has_time(record):
                done.add(str(record.get("problem")))
    return done


def measure_suite(
    problems: list[Problem],
    out: Path,
    timeout_s: float,
    force: bool = False,
    isolation: str = "subprocess",
) -> MeasureStats:
    path = out / MEASURED_FILE
    done = set() if force else measured_problems(path)
    measured = failed = 0
    with WorkerSet() as workers, path.open("a", encoding="utf-8") as file:
        for problem in problems:
            if problem.rel in done:
                continue
            outcome = run_solar(
                ["validate", str(problem.path), "--json"], timeout_s, isolation, workers
            )
            records = None
            if outcome.returncode == 0:
                try:
                    records = parse_json(outcome.stdout)
                except ValueError:
                    records = None
            if records is None:
                message = (
                    failure_message(outcome, timeout_s)
                    if outcome.returncode != 0
                    else "no JSON from validate"
                )
                failed += 1
                file.write(
                    json.dumps({"problem": problem.rel, "status": "error", "error": message}) + "\n"
                )
                file.flush()
                if _MACHINE_FAILURE.search(message):
                    return MeasureStats(
                        measured, failed, len(done), f"`solar validate` cannot run here: {message}"
                    )
                continue
            for record in records if isinstance(records, list) else [records]:
                if isinstance(record, dict):
                    file.write(json.dumps({**record, "problem": problem.rel}) + "\n")
            file.flush()
            measured += 1
    return MeasureStats(measured, failed, len(done), None)
