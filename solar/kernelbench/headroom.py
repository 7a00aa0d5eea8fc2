"""Joining result rows with measured times: headroom (measured / bound) and violations.

A violation is a measured run faster than a bound that claims what was measured: a bug in solar.
The fastest run is compared (as `solar validate` does); headroom uses the typical (median) time.
Which variants each level claims is solar.backends.levels' table.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from solar.backends.levels import EXECUTIONS, Violation, claims, headroom, ordered, violations
from solar.kernelbench.measured import Measurement
from solar.kernelbench.results import Row


def ordered_variants(names: set[str]) -> tuple[str, ...]:
    """Variants in the order reports show them (eager, compile), others alphabetically."""
    return tuple(n for n in EXECUTIONS if n in names) + tuple(sorted(names - set(EXECUTIONS)))


@dataclass(frozen=True)
class Entry:
    """A result row and the measured times matched to it, by variant."""

    row: Row
    measured: dict[str, Measurement] = field(default_factory=dict)

    def seconds(self, variant: str) -> float | None:
        m = self.measured.get(variant)
        return None if m is None else m.seconds

    def headroom(self, variant: str, level: str) -> float | None:
        """measured / bound: how far the measured run is from the bound (< 1: a violation)."""
        return headroom(self.seconds(variant), self.row.bound_seconds(level))


@dataclass(frozen=True)
class RowViolation:
    """A violation of one result row's bound (its problem and GPU) by a measured run from `source`."""

    problem: str
    arch: str
    source: str
    violation: Violation


@dataclass(frozen=True)
class Joined:
    """Every row with its measurements; the measurements that matched no row; the violations."""

    entries: tuple[Entry, ...]
    unmatched: tuple[Measurement, ...]
    ambiguous: tuple[Measurement, ...]
    violations: tuple[RowViolation, ...]
    variants: tuple[str, ...]
    levels: tuple[str, ...]

    @property
    def has_measured(self) -> bool:
        return bool(self.variants)


def _stem(name: str) -> str:
    text = name.strip().replace("\\", "/").removeprefix("./")
    return text.removesuffix(".py")


def match_problem(name: str, problems: list[str]) -> list[str]:
    """The problems a measured name can mean: the same relative path, or one that ends with it
    (`1_Square.py`, `level1/1_Square`), or one it ends with (an absolute path). Without `.py`."""
    wanted = _stem(name)
    exact = [p for p in problems if _stem(p) == wanted]
    if exact:
        return exact
    tail = PurePosixPath(wanted).parts
    return [
        p
        for p in problems
        if (parts := PurePosixPath(_stem(p)).parts)
        and (parts[-len(tail) :] == tail or tail[-len(parts) :] == parts)
    ]


def join(rows: list[Row], measurements: list[Measurement] | tuple[Measurement, ...]) -> Joined:
    """Match measurements to rows by problem and GPU (later measurements of a pair win)."""
    problems = sorted({r.problem for r in rows})
    by_key = {r.key: r for r in rows}
    matched: dict[tuple[str, str], dict[str, Measurement]] = {}
    unmatched, ambiguous = [], []
    for m in measurements:
        candidates = match_problem(m.problem, problems)
        if len(candidates) > 1:
            ambiguous.append(m)
            continue
        key = (candidates[0], m.arch) if candidates and m.arch else None
        if key not in by_key:
            unmatched.append(m)
            continue
        matched.setdefault(key, {})[m.variant] = m
    entries = tuple(Entry(r, matched.get(r.key, {})) for r in rows)
    levels = ordered({lvl for r in rows if r.status == "ok" for lvl in (r.bounds or {})})
    variants = ordered_variants({v for e in entries for v in e.measured})
    found = tuple(
        RowViolation(e.row.problem, e.row.arch, e.measured[v.execution].source, v)
        for e in entries
        for v in violations(_bounds(e.row, levels), {x: m.fastest_seconds for x, m in e.measured.items()})
    )
    return Joined(entries, tuple(unmatched), tuple(ambiguous), found, variants, levels)


def _bounds(row: Row, levels: tuple[str, ...]) -> dict[str, float]:
    seconds = {lvl: row.bound_seconds(lvl) for lvl in levels}
    return {lvl: s for lvl, s in seconds.items() if s is not None}


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def headroom_stats(joined: Joined) -> list[dict]:
    """Headroom statistics per (GPU, variant, bound level, problem level) over matched ok rows."""
    groups: dict[tuple, list[float]] = {}
    for e in joined.entries:
        if e.row.status != "ok":
            continue
        for variant in e.measured:
            for level in joined.levels:
                h = e.headroom(variant, level)
                if h is not None and claims(level, variant):
                    groups.setdefault((e.row.arch, variant, level, e.row.level), []).append(h)
    return [
        {
            "arch": arch,
            "variant": variant,
            "bound": level,
            "level": plevel,
            "count": len(values),
            "median": statistics.median(values),
            "geomean": geomean(values),
            "min": min(values),
            "max": max(values),
        }
        for (arch, variant, level, plevel), values in sorted(
            groups.items(), key=lambda kv: _stats_key(kv[0], joined)
        )
    ]


def _stats_key(key: tuple, joined: Joined) -> tuple:
    """Order of the statistics: GPU, then variants and bound levels in report order, then level."""
    arch, variant, level, plevel = key
    return (
        arch,
        joined.variants.index(variant),
        joined.levels.index(level),
        plevel is None,
        plevel or 0,
    )
