"""The committed H200 timings (benchmarks/results/h200/) as an oracle for the unfused, recurrence,
eager_host and graphed levels: every level is recomputed from the committed per-problem ingredients
(benchmarks/eager_host_rows.py) with a host profile's dispatch floors (hardware_specs/hosts/) and the
calibrated spec's device floors, and none may exceed a fastest measured run of an execution it
claims (eager_host, unfused, recurrence: eager; graphed: a CUDA-graph replay; docs/BOUNDS.md §17,
§18, §20): the committed protocol (head start from the profile) and level 3 timed with a synchronised
start (benchmarks/eager_host_measure.py: λ = 0). The committed profiles are what
benchmarks/host_profiles.py derives from the committed raw calibrations."""

from __future__ import annotations

import statistics

import pytest

from benchmarks.eager_host_join import CORPUS, CORPUS_ROWS, MEASURED, RESULTS, ROWS, SYNCED, join
from benchmarks.host_profiles import outputs

HOSTS = ("h200-host", "default")  # the host that ran the timings, and the default below every host
PAIRS = [(ROWS, MEASURED), (ROWS, SYNCED), (CORPUS_ROWS, CORPUS)]
GRAPHED = sorted(p for p in RESULTS.glob("*graph*.jsonl"))  # rows with measured.graphed (graph replays)


def test_committed_data_is_there():
    assert all(p.is_file() for pair in PAIRS for p in pair)
    joined = join(dispatch_us=1.0)  # any floor: checks the join itself
    assert {j.level for j in joined} >= {"level3"}
    assert all(j.bounds["eager_host"] >= j.bounds["unfused"] * (1 - 1e-12) for j in joined)
    assert all(j.bounds["graphed"] >= j.bounds["unfused"] * (1 - 1e-12) for j in joined)


def test_committed_profiles_are_what_the_raw_files_give():
    stale = [path.name for path, text in outputs(RESULTS.parent).items() if not path.is_file() or path.read_text() != text]
    assert stale == []  # else: python benchmarks/host_profiles.py


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("rows,measured", PAIRS, ids=[m.stem for _, m in PAIRS])
def test_no_level_above_a_run_it_claims(rows, measured, host):
    joined = join(rows_path=rows, measured_path=measured, host=host)
    assert joined
    assert [(j.problem, v.describe()) for j in joined for v in j.violations()] == []


# Per (timings, host): problems joined, median eager_host / eager, the margin (least eager / bound
# over every problem) and over the dispatch-bound ones (the host stage sets the bound).
TIGHTNESS = [
    (MEASURED, "level3", "h200-host", 48, 0.3161, 1.3074, 22, 1.5476),
    (SYNCED, "level3", "h200-host", 48, 0.3856, 1.3123, 24, 1.5162),
    (CORPUS, "corpus", "h200-host", 26, 0.3090, 1.8759, 14, 2.7876),
    (MEASURED, "level3", "default", 48, 0.2617, 1.3074, 22, 2.1699),
    (SYNCED, "level3", "default", 48, 0.3094, 1.3123, 23, 2.1227),
    (CORPUS, "corpus", "default", 26, 0.2185, 1.8759, 11, 3.8422),
]


@pytest.mark.parametrize("measured,level,host,n,median,margin,bound_by_host,host_margin", TIGHTNESS)
def test_eager_host_tightness_and_margin(measured, level, host, n, median, margin, bound_by_host, host_margin):
    rows = CORPUS_ROWS if measured == CORPUS else ROWS
    joined = [j for j in join(rows_path=rows, measured_path=measured, host=host) if j.level == level]
    ratios = [j.bounds["eager_host"] / j.measured_seconds for j in joined]
    dispatch = [j for j in joined if j.kind.startswith("host")]
    assert len(joined) == n  # level 3: 48 of 50 (29_SwinMLP, 30_SwinTransformerV2: no rows recorded)
    assert statistics.median(ratios) == pytest.approx(median, abs=5e-5)
    assert 1 / max(ratios) == pytest.approx(margin, abs=5e-5)
    assert len(dispatch) == bound_by_host
    assert min(j.measured_seconds / j.bounds["eager_host"] for j in dispatch) == pytest.approx(host_margin, abs=5e-5)


@pytest.mark.skipif(not GRAPHED, reason="no committed CUDA-graph replay timings (benchmarks/results/h200/*graph*.jsonl)")
@pytest.mark.parametrize("measured", GRAPHED, ids=[p.stem for p in GRAPHED])
def test_graphed_never_above_a_graph_replay(measured):
    rows = CORPUS_ROWS if "models" in measured.stem else ROWS
    joined = [j for j in join(rows_path=rows, measured_path=measured) if "graphed" in j.measured]
    assert joined
    assert [(j.problem, v.describe()) for j in joined for v in j.violations()] == []
