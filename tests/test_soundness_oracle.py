"""The committed H200 soundness sweep (benchmarks/results/h200/soundness.jsonl) as an
oracle: for every timed case, no bound that claims that execution may exceed the fastest measured
run. A failure here is a bound above a real kernel's time — a bug in solar."""

from __future__ import annotations

import importlib.util

import pytest

from benchmarks.soundness.cases import BY_NAME
from benchmarks.soundness.report import case_bounds, join, load_measured

MEASURED, ENV = load_measured()
CASES = sorted({m.case for m in MEASURED})


def test_the_oracle_is_the_h200_sweep():
    assert ENV["gpu"] == "NVIDIA H200"
    assert len(CASES) >= 100  # every case of the sweep that some backend ran
    assert set(CASES) <= set(BY_NAME)


def _needs(name: str) -> None:
    if BY_NAME[name].category == "model" and importlib.util.find_spec("transformers") is None:
        pytest.skip("needs transformers (the `models` extra)")


@pytest.mark.parametrize("name", CASES)
def test_no_bound_above_a_measured_minimum(name):
    _needs(name)
    bounds = case_bounds(name)
    rows = join([m for m in MEASURED if m.case == name], {name: bounds})
    assert rows, f"{name}: no bound level claims a measured mode"
    beaten = [
        f"{r.mode}/{r.level}: bound {r.bound_seconds * 1e6:.2f} µs > measured {r.measured_seconds * 1e6:.2f} µs"
        for r in rows
        if r.bound_seconds > r.measured_seconds
    ]
    assert not beaten, f"{name}: " + "; ".join(beaten)
