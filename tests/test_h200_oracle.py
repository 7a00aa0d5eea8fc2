"""The committed H200 validation runs as oracles: every bound solar computes today must stay at or
below the fastest run measured on the H200 for each execution the bound claims (fused and
cache-aware: eager and torch.compile; unfused: eager). The suite run
(benchmarks/results/h200/suite.jsonl) is checked against the golden totals, which
tests/test_golden_totals.py holds equal to today's analysis; the GEMM / convolution / attention
shapes (shapes.jsonl) are analysed here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from benchmarks.rows import RESULTS, beaten, read_rows
from solar.backends.levels import SPEC_LEVELS

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "tests/golden/totals.json").read_text())


SUITE = [r for r in read_rows(RESULTS / "suite.jsonl") if "measured" in r]


def test_the_suite_run_covers_the_golden_suite():
    assert len(SUITE) == 81
    assert all(f"benchmarks/suite/{r['problem']}" in GOLDEN for r in SUITE)


@pytest.mark.parametrize("row", SUITE, ids=[r["problem"] for r in SUITE])
def test_suite_bounds_stay_below_the_h200_minima(row):
    golden = GOLDEN[f"benchmarks/suite/{row['problem']}"]["H200-SXM"]
    # the golden levels (host- and calibration-dependent ones are checked by their own oracles)
    bounds = {level: golden[f"{level}_seconds"] for level in SPEC_LEVELS if f"{level}_seconds" in golden}
    assert set(SPEC_LEVELS) <= set(bounds)
    assert not beaten(bounds, row["measured"])


SHAPES = [r for r in read_rows(RESULTS / "shapes.jsonl") if "measured" in r]


@pytest.mark.parametrize("row", SHAPES, ids=[r["problem"] for r in SHAPES])
def test_shape_bounds_stay_below_the_h200_minima(row):
    from benchmarks.validation_shapes import CASES
    from solar.api import analyze_loaded, load

    case = next(c for c in CASES if c.name == row["problem"])
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    try:  # the flags the H200 run used (benchmarks/h200_validation.py)
        torch.backends.cuda.matmul.allow_tf32 = case.tf32
        torch.backends.cudnn.allow_tf32 = True
        with FakeTensorMode(allow_non_fake_inputs=True):
            model, inputs = case.build()
            loaded = load(model, inputs)
        report = analyze_loaded(loaded, "H200-SXM")
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old
    bounds = {level: b.seconds for level, b in report.bounds.items()}
    assert not beaten(bounds, row["measured"])
