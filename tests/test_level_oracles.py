"""The H200 runs as oracles for every bound level, the library level included: KernelBench levels
1-3 (eager; level 2 also torch.compile) and the model corpus (eager, torch.compile for some) against the bounds recorded by
benchmarks/level_bounds.py (KernelBench's sources are not committed), and the repository's suite
(eager and compile) against the golden totals. No level may exceed a measured minimum of an
execution it claims (solar.validate.run.LEVEL_MODES: library against eager and compile, unfused
against eager, fused and cache-aware against everything), and the levels stay ordered."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from benchmarks.rows import RESULTS, beaten, read_rows

ROOT = Path(__file__).resolve().parents[1]
ORDER = ("fused", "cache_aware", "library", "unfused")  # each at or below the next
PAIRS = {  # measured rows -> recorded bounds
    "kernelbench_eager.jsonl": "kernelbench_bounds.jsonl",
    "kernelbench_level2_compile.jsonl": "kernelbench_bounds.jsonl",
    "models.jsonl": "models_bounds.jsonl",
}


def _rows(name: str) -> list[dict]:
    return read_rows(RESULTS / name, missing_ok=True)


def _joined(measured: str, bounds: str) -> list[tuple[str, dict, dict]]:
    recorded = {r["problem"]: r["bounds"] for r in _rows(bounds) if "bounds" in r}
    return [
        (r["problem"], r["measured"], recorded[r["problem"]])
        for r in _rows(measured)
        if r["problem"] in recorded and "measured" in r
    ]


CASES = [(m, *row) for m, b in PAIRS.items() for row in _joined(m, b)]


def test_the_recorded_bounds_cover_the_runs():
    kb = _joined("kernelbench_eager.jsonl", "kernelbench_bounds.jsonl")
    assert len(kb) >= 100  # of the 250 timed problems (the rest: see the bounds file's errors)
    assert all("library" in bounds for _, _, bounds in kb)


@pytest.mark.parametrize(
    "source,problem,measured,bounds", CASES, ids=[f"{c[0].split('.')[0]}:{c[1]}" for c in CASES]
)
def test_no_level_above_a_measured_minimum(source, problem, measured, bounds):
    assert not beaten(bounds, measured), f"{source} {problem}"


def _ordered(bounds: dict[str, float]) -> bool:
    levels = [bounds[name] for name in ORDER if name in bounds]
    return all(a <= b * (1 + 1e-9) for a, b in itertools.pairwise(levels))


def test_levels_are_ordered_everywhere():
    golden = json.loads((ROOT / "tests/golden/totals.json").read_text())
    rows = [
        {k.removesuffix("_seconds"): v for k, v in g.items() if k.endswith("_seconds")}
        for arch in golden.values()
        for g in arch.values()
    ]
    rows += [bounds for _, _, _, bounds in CASES]
    assert rows and all(_ordered(b) for b in rows)
