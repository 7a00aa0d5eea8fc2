"""Measured run times from files: `solar validate --json` output and KernelBench baseline timings.

Accepted shapes (the loader is table-driven: the key tables below are the whole contract).

1. solar validate records — a JSON list, JSON Lines, one object, or an object holding the list under
   one of LIST_KEYS. Each record names its problem (PROBLEM_KEYS: a path relative to ROOT, a file
   name, or a program name without `.py`) and its GPU (ARCH_KEYS: a spec name or alias such as
   `H200-SXM` or `NVIDIA H200`, or an object with a `name`). Times are either per variant,
   `"measured": {"eager": {"median_seconds": 1.2e-3}, "compile": {...}}` (or a bare number of
   seconds per variant), or flat on the record (`"median_seconds": ...`, variant from `variant`,
   default `eager`). TIME_KEYS lists the accepted time fields and their units; MIN_TIME_KEYS the
   fastest run's (`min_seconds`), which violations are checked with when present.
2. KernelBench baseline timing — `{"level1": {"1_Name.py": {"mean": 3.5, "std": ..., "min": ...,
   "max": ..., "hardware": "NVIDIA H100 80GB HBM3"}}}`, times in MILLISECONDS; `mean` is the typical
   time (as KernelBench uses it) and `min` the fastest run. Variant: `eager`, or `compile_...` taken from a file named like KernelBench's
   `baseline_time_torch_compile_inductor_default.json`.

`VARIANT=FILE` sets the variant of every time in FILE; `--measured-arch` sets the GPU of every record.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solar.bounded import loads_json, loads_json_lines
from solar.errors import SolarError, UsageError
from solar.hardware import get_spec

PROBLEM_KEYS = ("problem", "file", "path", "program")
ARCH_KEYS = ("arch", "gpu", "hardware", "device_name")
MEASURED_KEYS = ("measured", "timings", "times")
LIST_KEYS = ("results", "records", "problems", "rows")
#: time field -> seconds per unit, in order of preference (the median first).
TIME_KEYS: tuple[tuple[str, float], ...] = (
    ("median_seconds", 1.0),
    ("median_s", 1.0),
    ("median_ms", 1e-3),
    ("median_us", 1e-6),
    ("seconds", 1.0),
    ("mean_seconds", 1.0),
    ("mean_s", 1.0),
    ("mean_ms", 1e-3),
)
#: the fastest run (violations compare it with the bounds, as `solar validate` does).
MIN_TIME_KEYS: tuple[tuple[str, float], ...] = (
    ("min_seconds", 1.0),
    ("min_s", 1.0),
    ("min_ms", 1e-3),
    ("min_us", 1e-6),
)
#: KernelBench baseline files: mean and fastest of the trials, in milliseconds.
KERNELBENCH_TIME = ("mean", 1e-3)
KERNELBENCH_MIN_TIME = ("min", 1e-3)
_LEVEL_KEY = re.compile(r"^level\d+$")


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured time: the problem as the file names it, the GPU (canonical spec name when known;
    None when the record names none), the variant measured (eager, compile, ...), the typical time
    (median; KernelBench: mean), the fastest run when the file gives it, and the file."""

    problem: str
    arch: str | None
    variant: str
    seconds: float
    source: str
    min_seconds: float | None = None

    @property
    def fastest_seconds(self) -> float:
        """What violations compare with the bounds: the fastest run, else the typical time."""
        return self.min_seconds if self.min_seconds is not None else self.seconds


@dataclass(frozen=True)
class MeasuredFile:
    """The measurements of one file and one line per record that had none (and why)."""

    path: str
    format: str
    measurements: tuple[Measurement, ...]
    skipped: tuple[str, ...]


class MeasuredFileError(UsageError):
    """A --measured file that cannot be read or has no accepted shape."""


@functools.cache
def canonical_arch(name: str) -> str:
    """The spec name for a GPU name or alias (`NVIDIA H200` -> `H200-SXM`); unknown names as given."""
    try:
        return get_spec(name).name
    except SolarError:
        return name


def first_value(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((record[k] for k in keys if record.get(k) is not None), None)


def _arch_of(record: dict[str, Any]) -> str | None:
    value = first_value(record, ARCH_KEYS)
    if isinstance(value, dict):
        value = first_value(value, ("name", "arch", "spec"))
    return canonical_arch(str(value)) if value is not None else None


def seconds_of(value: Any, keys: tuple[tuple[str, float], ...] = TIME_KEYS) -> float | None:
    """Seconds from a bare number of seconds or an object with one of `keys` (field, unit)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if keys is TIME_KEYS else None
    if isinstance(value, dict):
        for key, unit in keys:
            number = value.get(key)
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                return float(number) * unit
    return None


def _valid(seconds: float | None) -> bool:
    return seconds is not None and math.isfinite(seconds) and seconds > 0


class _NotOneDocument(UsageError):
    """The text is not one JSON document: it may be JSON Lines."""


def json_records(text: str, shown: str, error: type[UsageError] = MeasuredFileError) -> Any:
    """The JSON value of `text`, or the list of its JSON Lines records; `error` names a bad line."""
    try:
        return loads_json(text, shown, _NotOneDocument)
    except _NotOneDocument:
        pass
    return loads_json_lines(text, shown, error)


def _is_kernelbench(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and bool(data)
        and all(_LEVEL_KEY.match(str(k)) and isinstance(v, dict) for k, v in data.items())
    )


def _kernelbench_variant(path: Path) -> str:
    match = re.search(r"(compile\w*)", path.stem)
    return match.group(1) if match else "eager"


def _from_kernelbench(data: dict, shown: str, variant: str) -> tuple[list[Measurement], list[str]]:
    found, skipped = [], []
    key = KERNELBENCH_TIME[0]
    for level, entries in data.items():
        for name, stats in entries.items():
            seconds = seconds_of(stats, (KERNELBENCH_TIME,))
            if not _valid(seconds):
                skipped.append(f"{level}/{name}: no positive `{key}`")
                continue
            fastest = seconds_of(stats, (KERNELBENCH_MIN_TIME,))
            arch = _arch_of(stats)
            found.append(
                Measurement(
                    f"{level}/{name}",
                    arch,
                    variant,
                    seconds,
                    shown,
                    fastest if _valid(fastest) else None,
                )
            )
    return found, skipped


def _records(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in LIST_KEYS:
            if isinstance(data.get(key), list):
                return data[key]
        if first_value(data, PROBLEM_KEYS) is not None:
            return [data]
    return None


def _from_records(
    records: list[Any], shown: str, variant: str | None
) -> tuple[list[Measurement], list[str]]:
    found, skipped = [], []
    for index, record in enumerate(records):
        problem = first_value(record, PROBLEM_KEYS) if isinstance(record, dict) else None
        if problem is None:
            skipped.append(f"record {index}: names no problem (keys: {', '.join(PROBLEM_KEYS)})")
            continue
        arch = _arch_of(record)
        measured = first_value(record, MEASURED_KEYS)
        if not isinstance(measured, dict):
            measured = {str(record.get("variant") or "eager"): record}
        times = {name: seconds_of(value) for name, value in measured.items()}
        times = {name: s for name, s in times.items() if _valid(s)}
        if not times:
            why = record.get("error") or record.get("status") or "no time field"
            skipped.append(f"{problem}: no measured time ({' '.join(str(why).split())[:120]})")
            continue
        for name, seconds in times.items():
            fastest = seconds_of(measured[name], MIN_TIME_KEYS)
            found.append(
                Measurement(
                    str(problem),
                    arch,
                    variant or name,
                    seconds,
                    shown,
                    fastest if _valid(fastest) else None,
                )
            )
    return found, skipped


def load_measured(spec: str, arch: str | None = None) -> MeasuredFile:
    """Measurements from `FILE` or `VARIANT=FILE`; `arch` (a GPU name) overrides the records' GPU."""
    variant, _, name = (
        spec.partition("=") if "=" in spec and not Path(spec).exists() else ("", "", spec)
    )
    path = Path(name)
    shown = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MeasuredFileError(
            f"{name}: cannot read measured file ({exc.strerror}); check the path"
        ) from None
    except UnicodeDecodeError:
        raise MeasuredFileError(
            f"{name}: not a measured file (not UTF-8 text); pass `solar validate --json` output "
            "or a KernelBench timing JSON"
        ) from None
    data = json_records(text, shown)
    if _is_kernelbench(data):
        kind = "kernelbench-baseline"
        found, skipped = _from_kernelbench(data, shown, variant or _kernelbench_variant(path))
    elif (records := _records(data)) is not None:
        kind = "solar-validate"
        found, skipped = _from_records(records, shown, variant or None)
    else:
        raise MeasuredFileError(
            f"{name}: not a `solar validate --json` output nor a KernelBench timing file "
            "(see `solar kernelbench --help` for the accepted shapes)"
        )
    if arch is not None:
        canonical = get_spec(
            arch
        ).name  # given on the command line: unknown or ambiguous is an error
        found = [dataclasses.replace(m, arch=canonical) for m in found]
    return MeasuredFile(str(path), kind, tuple(found), tuple(skipped))
