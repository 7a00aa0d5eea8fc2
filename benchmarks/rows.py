"""JSON-lines rows (the committed H200 results under benchmarks/results/h200/, a run's own output):
one reader for the benchmarks that join them and the oracle tests that check bounds against them,
the check those oracles share (no level above a measured minimum of an execution it claims), and
the one-line error a row of a failed measurement holds."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "h200"


def read_rows(path: str | Path, missing_ok: bool = False) -> list[dict]:
    """The JSON value of each non-blank line of a .jsonl file; a missing file reads as no rows
    where `missing_ok`."""
    path = Path(path)
    if missing_ok and not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def beaten(bounds: dict[str, float], measured: dict[str, dict]) -> list[str]:
    """A line for each level of `bounds` above the fastest run (`min_seconds`) of an execution
    mode it claims (solar.backends.levels.violations)."""
    from solar.backends.levels import violations

    return [
        f"{v.execution}/{v.level}: bound {v.bound_seconds * 1e6:.2f} µs > measured {v.measured_seconds * 1e6:.2f} µs"
        for v in violations(bounds, {mode: t["min_seconds"] for mode, t in measured.items()})
    ]


def error_line(exc: BaseException, limit: int = 300) -> str:
    """`Type: first line of the message`, cut at `limit` characters: a failed case's row."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:limit]


def row_or_error(measure: Callable[[], dict], device: str = "cuda") -> dict:
    """measure()'s row, or the row of its error (a model that does not fit or fails to build is a
    row); either way the model measure() built is freed before the next one."""
    try:
        return measure()
    except Exception as exc:  # noqa: BLE001  (any failure of the model is its row)
        return {"error": error_line(exc)}
    finally:
        gc.collect()
        if device == "cuda":
            import torch

            torch.cuda.empty_cache()


def in_fresh_process(script: str | Path, args: list[str]) -> object:
    """The last JSON line (an object or a list) `python script ARGS` prints, run in a fresh
    interpreter from the repository root; the last line of its error output (a string) when it fails
    or prints none."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, cwd=ROOT, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith(("{", "["))]
    if done.returncode != 0 or not lines:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return json.loads(lines[-1])
