"""The committed H200 times of JAX order statistics (benchmarks/results/h200/jax_sort.jsonl: jax
0.11.2, `benchmarks/jax_sort_h200.py --measure-only`) as oracles: today's bounds of every case,
computed here on the CPU, stay below the fastest measured call."""

from __future__ import annotations

import pytest

from benchmarks import jax_sort_h200 as cases
from benchmarks.rows import RESULTS, read_rows

ROWS = read_rows(RESULTS / "jax_sort.jsonl")


def test_every_case_was_timed():
    assert {r["case"] for r in ROWS} == set(cases.CASES) | {cases.MOE}
    assert all(r["environment"]["device"] == "NVIDIA H200" for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r["case"] for r in ROWS])
def test_no_bound_beats_the_h200_time(row):
    name = row["case"]
    bounds = cases._moe_bounds("H200-SXM") if name == cases.MOE else cases._bounds(*cases.CASES[name], "H200-SXM")
    assert bounds["fused"] > 0
    beaten = {level: s for level, s in bounds.items() if s > row["measured_min_s"]}
    assert not beaten, (name, beaten, row["measured_min_s"])
