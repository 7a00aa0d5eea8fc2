"""SOL scores from measured times, as SOL-ExecBench defines them: for a kernel time T_k, a baseline time
T_b and the speed of light T_SOL of the same workload on the same GPU,

    S = 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL))

(1 at the speed of light, 1/2 at the baseline, towards 0 for slower kernels), per workload and per
definition (the mean over its scored workloads), with the headroom T_k / T_SOL. T_SOL is the tightest
solar bound that bounds every implementation (solar.backends.levels.SOL_LEVELS).

A kernel faster than T_SOL is a **violation**: solar's bound is wrong (a bug to fix in solar). A kernel
within `suspicious_ratio` of T_SOL is **suspicious**: a result that close to the speed of light is
rare, and is worth re-checking for a reward hack (a kernel that skips work or times wrongly), as
SOL-ExecBench's own harness screens its results.

Measured files (JSON Lines, a JSON list, or one object): FlashInfer-Bench / SOL-ExecBench traces
(`definition`, `workload.uuid`, `evaluation.performance.latency_ms` and `reference_latency_ms`,
`evaluation.environment.hardware`), or flat records with `definition`, `workload` (uuid), `arch`,
`kernel_seconds` / `kernel_ms` and `baseline_seconds` / `baseline_ms`."""

from __future__ import annotations

import io
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solar.backends.levels import SOL_LEVELS, headroom, violations
from solar.errors import UsageError
from solar.kernelbench.measured import canonical_arch, json_records
from solar.kernelbench.results import write_file
from solar.userfiles import read_text

#: what a definition's measured kernel is: an implementation of any kind (not eager, not compiled)
KERNEL = "kernel"
#: (field, seconds per unit) for the kernel and the baseline time of a flat record.
KERNEL_KEYS = (("kernel_seconds", 1.0), ("kernel_ms", 1e-3), ("latency_ms", 1e-3), ("T_k", 1.0))
BASELINE_KEYS = (
    ("baseline_seconds", 1.0), ("baseline_ms", 1e-3), ("reference_latency_ms", 1e-3), ("T_b", 1.0),
)
DEFAULT_SUSPICIOUS_RATIO = 1.25


@dataclass(frozen=True, slots=True)
class Timing:
    definition: str
    workload: str
    arch: str | None
    kernel_seconds: float
    baseline_seconds: float | None
    source: str


@dataclass(frozen=True, slots=True)
class Score:
    """The score of one (definition, workload, GPU); `score` is None when T_b <= T_SOL."""

    definition: str
    workload: str
    arch: str
    sol_level: str
    sol_seconds: float
    kernel_seconds: float
    baseline_seconds: float | None
    score: float | None
    headroom: float
    violation: bool
    suspicious: bool
    note: str | None


class MeasuredError(UsageError):
    """A --measured file that cannot be read."""


def _number(data: dict, keys: tuple[tuple[str, float], ...]) -> float | None:
    for key, unit in keys:
        v = data.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v) * unit
    return None


def _arch(name: Any) -> str | None:
    if name is None:
        return None
    text = str(name)
    found = canonical_arch(text)
    return found if found != text else canonical_arch(text.replace("_", " "))


def _timing(record: Any, shown: str, arch: str | None) -> Timing | None:
    if not isinstance(record, dict):
        return None
    definition = record.get("definition")
    workload = record.get("workload")
    evaluation = record.get("evaluation")
    times = record
    hardware = record.get("arch") or record.get("gpu") or record.get("hardware")
    if isinstance(workload, dict):  # a trace
        workload = workload.get("uuid")
    if isinstance(evaluation, dict):
        if evaluation.get("status") not in (None, "PASSED"):
            return None  # a failed run has no time
        times = evaluation.get("performance") or {}
        hardware = (evaluation.get("environment") or {}).get("hardware", hardware)
    kernel = _number(times, KERNEL_KEYS)
    if not (isinstance(definition, str) and isinstance(workload, str) and kernel and kernel > 0):
        return None
    baseline = _number(times, BASELINE_KEYS)
    return Timing(definition, workload, arch or _arch(hardware), kernel, baseline if baseline and baseline > 0 else None, shown)


def load_timings(path: str, arch: str | None = None) -> list[Timing]:
    """Timings of a measured file; records without a usable time (failed runs) are skipped."""
    text = read_text(path, "a measured-times file (JSON or JSON Lines)", MeasuredError)
    data = json_records(text, str(path), MeasuredError)
    records = data if isinstance(data, list) else [data]
    timings = [t for r in records if (t := _timing(r, path, arch)) is not None]
    if not timings:
        raise MeasuredError(f"{path}: no record with a definition, a workload uuid and a kernel time (kernel_seconds, kernel_ms or a trace's evaluation.performance.latency_ms)")
    return timings


def sol_of(bounds: dict[str, dict] | None) -> tuple[str, float] | None:
    """(level, seconds) of the tightest bound in SOL_LEVELS that a row has."""
    found = [(float(bounds[lv]["seconds"]), lv.value) for lv in SOL_LEVELS if bounds and lv in bounds]
    if not found:
        return None
    seconds, level = max(found)
    return level, seconds


def score(t_k: float, t_b: float | None, t_sol: float) -> float | None:
    """S = 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL)); None when the baseline is not above T_SOL."""
    if t_b is None or t_b <= t_sol:
        return None
    return 1.0 / (1.0 + (t_k - t_sol) / (t_b - t_sol))


def score_rows(
    rows: list[dict], timings: list[Timing], suspicious_ratio: float = DEFAULT_SUSPICIOUS_RATIO
) -> tuple[list[Score], list[Timing]]:
    """Scores of the rows (definition rows with `definition`, `workload`, `arch`, `bounds`) that
    have timings (later timings of a workload win); and the timings that matched no ok row."""
    by_key = {(r["definition"], r["workload"], r["arch"]): r for r in rows if r.get("status") == "ok"}
    latest: dict[tuple, Timing] = {}
    unmatched = []
    for t in timings:
        key = (t.definition, t.workload, t.arch)
        if key in by_key:
            latest[key] = t
        else:
            unmatched.append(t)
    scores = []
    for key, t in latest.items():
        sol = sol_of(by_key[key]["bounds"])
        if sol is None:
            unmatched.append(t)
            continue
        level, t_sol = sol
        s = score(t.kernel_seconds, t.baseline_seconds, t_sol)
        violation = bool(violations({level: t_sol}, {KERNEL: t.kernel_seconds}))
        notes = []
        if violation:
            notes.append(f"kernel {t.kernel_seconds:.3g} s is below the {level} bound {t_sol:.3g} s: a bug in solar")
        if t.baseline_seconds is not None and t.baseline_seconds < t_sol:
            notes.append(f"baseline {t.baseline_seconds:.3g} s is below the {level} bound: a bug in solar")
        suspicious = not violation and t.kernel_seconds < suspicious_ratio * t_sol
        if suspicious:
            notes.append(f"within {suspicious_ratio:g}x of the speed of light: re-check it for a reward hack")
        if s is None and t.baseline_seconds is not None:
            notes.append("no score: the baseline is not slower than the speed of light")
        scores.append(Score(
            t.definition, t.workload, t.arch, level, t_sol, t.kernel_seconds, t.baseline_seconds, s,
            headroom(t.kernel_seconds, t_sol), violation, suspicious, "; ".join(notes) or None,
        ))
    scores.sort(key=lambda s: (s.definition, s.arch, s.workload))
    return scores, unmatched


def per_definition(scores: list[Score]) -> list[dict[str, Any]]:
    """Per (definition, GPU): the mean score over scored workloads, headroom statistics, flags."""
    groups: dict[tuple[str, str], list[Score]] = {}
    for s in scores:
        groups.setdefault((s.definition, s.arch), []).append(s)
    out = []
    for (definition, arch), group in sorted(groups.items()):
        scored = [s.score for s in group if s.score is not None]
        heads = [s.headroom for s in group]
        out.append({
            "definition": definition,
            "arch": arch,
            "workloads": len(group),
            "scored": len(scored),
            "score": statistics.fmean(scored) if scored else None,
            "headroom_median": statistics.median(heads),
            "headroom_min": min(heads),
            "violations": sum(s.violation for s in group),
            "suspicious": sum(s.suspicious for s in group),
        })
    return out


def as_record(s: Score) -> dict[str, Any]:
    return {
        "sol_level": s.sol_level, "sol_seconds": s.sol_seconds, "kernel_seconds": s.kernel_seconds,
        "baseline_seconds": s.baseline_seconds, "score": s.score, "headroom": s.headroom,
        "violation": s.violation, "suspicious": s.suspicious, "note": s.note,
    }


def write_scores(out: Path, scores: list[Score]) -> Path:
    import csv

    path = out / "scores.csv"
    f = io.StringIO()
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["definition", "workload", "arch", "sol_level", "sol_seconds", "kernel_seconds",
                "baseline_seconds", "score", "headroom", "violation", "suspicious", "note"])
    for s in scores:
        w.writerow([s.definition, s.workload, s.arch, s.sol_level, s.sol_seconds, s.kernel_seconds,
                    s.baseline_seconds, s.score, s.headroom, s.violation, s.suspicious, s.note or ""])
    write_file(path, f.getvalue())
    return path
