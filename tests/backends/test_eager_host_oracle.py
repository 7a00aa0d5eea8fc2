"""The committed H200 eager timings of KernelBench (benchmarks/results/h200/kernelbench_eager.jsonl)
as an oracle for the eager_host, recurrence and unfused levels: every level is recomputed from the
committed per-problem ingredients (benchmarks/eager_host_rows.py) with the calibrated spec's
dispatch floors, and none may exceed a fastest measured eager run (docs/BOUNDS.md §17, §18): the
committed protocol (head start λ from the calibration) and level 3 timed with a synchronised start
(benchmarks/eager_host_measure.py: λ = 0) where that file exists."""

from __future__ import annotations

import statistics

import pytest

from benchmarks.eager_host_join import CORPUS, CORPUS_ROWS, MEASURED, ROWS, SYNCED, join, summary
from solar.hardware.spec import calibrated_spec

CALIBRATED = calibrated_spec("H200-SXM")
needs_floors = pytest.mark.skipif(
    CALIBRATED is None or CALIBRATED.dispatch is None,
    reason="hardware_specs/calibrated/H200-SXM.yaml has no dispatch section (solar calibrate --dispatch-only writes it)",
)


def test_committed_data_is_there():
    assert ROWS.is_file() and MEASURED.is_file()
    joined = join(dispatch_us=1.0)  # any floor: checks the join itself
    assert {j.level for j in joined} >= {"level3"}
    assert all(j.bounds["eager_host"] >= j.bounds["unfused"] * (1 - 1e-12) for j in joined)


def test_unfused_never_above_eager():
    joined = join(dispatch_us=1.0)
    bad = [(j.problem, j.bounds["unfused"], j.measured_seconds) for j in joined if j.bounds["unfused"] > j.measured_seconds]
    assert bad == []


MEASUREMENTS = [MEASURED, *([SYNCED] if SYNCED.is_file() else [])]
PAIRS = [(ROWS, m) for m in MEASUREMENTS] + ([(CORPUS_ROWS, CORPUS)] if CORPUS_ROWS.is_file() else [])


@needs_floors
@pytest.mark.parametrize("rows,measured", PAIRS, ids=[m.stem for _, m in PAIRS])
def test_eager_host_and_recurrence_never_above_eager(rows, measured):
    joined = join(rows_path=rows, measured_path=measured)
    assert joined
    bad = [
        (j.problem, level, seconds, j.measured_seconds)
        for j in joined for level, seconds in j.bounds.items() if seconds > j.measured_seconds
    ]
    assert bad == []


@needs_floors
def test_eager_host_explains_level3():
    # the target: median eager_host / eager >= 0.5 on KernelBench level 3, against the
    # synchronised-start timing (λ = 0) where it exists, else the committed protocol's
    joined = [j for j in join(measured_path=MEASUREMENTS[-1]) if j.level == "level3"]
    assert len(joined) >= 48  # of the 50 problems (29_SwinMLP, 30_SwinTransformerV2: no rows recorded)
    ratio = statistics.median(j.bounds["eager_host"] / j.measured_seconds for j in joined)
    assert ratio >= 0.5, f"median eager_host / eager on level 3: {ratio:.3f} ({summary(joined)})"
