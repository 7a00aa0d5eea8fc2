"""The committed timings of every host folder (benchmarks/results/<host>/) as an oracle for the unfused, recurrence,
eager_host and graphed levels: every level is recomputed from the committed per-problem ingredients
(benchmarks/eager_host_rows.py) with a host profile's dispatch floors (hardware_specs/hosts/) and the
calibrated spec's device floors, and none may exceed a fastest measured run of an execution it
claims (eager_host, unfused, recurrence: eager; graphed: a CUDA-graph replay; docs/BOUNDS.md §17,
§18, §20): the committed protocol (head start from the profile) and level 3 timed with a synchronised
start (benchmarks/eager_host_measure.py: λ = 0); each with the folder's host profile and the
default profile. The committed profiles are what
benchmarks/host_profiles.py derives from the committed raw calibrations."""

from __future__ import annotations

import json
import statistics

import pytest

from benchmarks.eager_host_join import (
    CORPUS,
    CORPUS_ROWS,
    MEASURED,
    RESULTS,
    ROWS,
    SYNCED,
    gpu_of,
    host_of,
    join,
    pairs,
)
from benchmarks.host_profiles import outputs
from benchmarks.rows import read_rows

PAIRS = [(ROWS, MEASURED), (ROWS, SYNCED), (CORPUS_ROWS, CORPUS)]
# Every host folder's (rows, timings) pairs, each checked with the folder's own host profile and
# with the default profile (below every host): a new folder of data is checked without an edit here.
FOLDERS = sorted(d for d in RESULTS.parent.iterdir() if d.is_dir() and pairs(d))
CASES = [(rows, timings, host) for d in FOLDERS for rows, timings in pairs(d) for host in dict.fromkeys((host_of(d), "default"))]

H100 = RESULTS.parent / "h100"
H100_SUITES = {  # suite rows -> their timings (synchronised start, with CUDA-graph replays), level
    "kernelbench": ("kernelbench_level3_sync_start.jsonl", "level3"),
    "dispatch": ("dispatch_sync_start.jsonl", "dispatch"),
    "models": ("models_sync_start.jsonl", "models"),
    "hf_timed": ("hf_timed_sync_start.jsonl", "hf_timed"),  # transformers steps with a KV cache (benchmarks/hf_timed.py)
}


def _h100(suite, run=""):
    """(rows, timings, level) of an H100 suite; run "_run2", "_run3", ...: the timings of a later machine start."""
    timings, level = H100_SUITES[suite]
    return H100 / f"{suite}_eager_host_rows.jsonl", H100 / timings.replace(".jsonl", f"{run}.jsonl"), level


def test_committed_data_is_there():
    assert all(p.is_file() for pair in PAIRS for p in pair)
    joined = join(dispatch_us=1.0)  # any floor: checks the join itself
    assert {j.level for j in joined} >= {"level3"}
    assert all(j.bounds["eager_host"] >= j.bounds["unfused"] * (1 - 1e-12) for j in joined)
    assert all(j.bounds["graphed"] >= j.bounds["unfused"] * (1 - 1e-12) for j in joined)


def test_committed_profiles_are_what_the_raw_files_give():
    stale = [path.name for path, text in outputs(RESULTS.parent).items() if not path.is_file() or path.read_text() != text]
    assert stale == []  # else: python benchmarks/host_profiles.py


def test_every_host_folder_is_paired():
    got = {(d.name, r.name, t.name) for d in FOLDERS for r, t in pairs(d)}
    assert {("h200", "kernelbench_eager_host_rows.jsonl", t) for t in (
        "kernelbench_eager.jsonl", "kernelbench_level2_compile.jsonl", "kernelbench_level3_sync_start.jsonl")} <= got
    assert ("h200", "models_eager_host_rows.jsonl", "models.jsonl") in got
    assert {("h100", f"{suite}_eager_host_rows.jsonl", timings) for suite, (timings, _) in H100_SUITES.items()} <= got
    assert {host_of(d) for d in FOLDERS} == {"h100-host", "h200-host"}
    assert {gpu_of(r) for d in FOLDERS for r, _ in pairs(d)} == {"H100-SXM", "H200-SXM"}


@pytest.mark.parametrize("rows,timings,host", CASES, ids=[f"{t.parent.name}/{t.stem}-{h}" for _, t, h in CASES])
def test_no_level_above_a_run_it_claims(rows, timings, host):
    joined = join(rows_path=rows, measured_path=timings, host=host, gpu=gpu_of(rows))
    assert joined
    assert [(j.problem, v.describe()) for j in joined for v in j.violations()] == []


# Per (rows, timings, host, GPU): problems joined, median eager_host / eager, the margin (least eager /
# bound over every problem) and over the dispatch-bound ones (the host stage sets the bound).
TIGHTNESS = [
    (ROWS, MEASURED, "level3", "h200-host", "H200-SXM", 50, 0.3471, 1.3074, 24, 1.5476),
    (ROWS, SYNCED, "level3", "h200-host", "H200-SXM", 50, 0.4129, 1.3123, 26, 1.5162),
    (CORPUS_ROWS, CORPUS, "corpus", "h200-host", "H200-SXM", 26, 0.3090, 1.8759, 14, 2.7876),
    (ROWS, MEASURED, "level3", "default", "H200-SXM", 50, 0.2333, 1.3074, 17, 2.7680),
    (ROWS, SYNCED, "level3", "default", "H200-SXM", 50, 0.2684, 1.3123, 24, 2.5991),
    (CORPUS_ROWS, CORPUS, "corpus", "default", "H200-SXM", 26, 0.1533, 1.8759, 9, 5.3638),
    (*_h100("kernelbench"), "h100-host", "H100-SXM", 50, 0.4473, 1.3020, 26, 1.4016),
    (*_h100("kernelbench", "_run2"), "h100-host", "H100-SXM", 50, 0.4312, 1.3046, 26, 1.3713),
    (*_h100("kernelbench", "_run3"), "h100-host", "H100-SXM", 50, 0.4950, 1.1938, 26, 1.1938),
    (*_h100("kernelbench", "_run4"), "h100-host", "H100-SXM", 50, 0.3789, 1.3024, 26, 1.6392),
    (*_h100("dispatch"), "h100-host", "H100-SXM", 7, 0.4152, 1.8146, 7, 1.8146),
    (*_h100("dispatch", "_run2"), "h100-host", "H100-SXM", 7, 0.4115, 2.0335, 7, 2.0335),
    (*_h100("dispatch", "_run3"), "h100-host", "H100-SXM", 7, 0.4438, 1.5372, 7, 1.5372),
    (*_h100("dispatch", "_run4"), "h100-host", "H100-SXM", 7, 0.3788, 1.7793, 7, 1.7793),
    (*_h100("dispatch", "_run5"), "h100-host", "H100-SXM", 7, 0.2959, 2.2109, 7, 2.2109),  # the batch-1 variants
    (*_h100("models"), "h100-host", "H100-SXM", 7, 0.2972, 2.1454, 4, 2.7858),
    (*_h100("models", "_run2"), "h100-host", "H100-SXM", 7, 0.2892, 2.1477, 4, 3.0597),
    (*_h100("hf_timed"), "h100-host", "H100-SXM", 10, 0.3042, 2.3025, 6, 2.4856),
    (*_h100("models", "_run3"), "h100-host", "H100-SXM", 7, 0.2876, 2.1793, 4, 3.1184),
    (*_h100("hf_timed", "_run2"), "h100-host", "H100-SXM", 10, 0.2396, 2.5659, 6, 3.7987),
    (*_h100("kernelbench", "_run5"), "h100-host", "H100-SXM", 50, 0.3705, 1.3171, 26, 1.9329),  # the eleventh start
    (*_h100("dispatch", "_run6"), "h100-host", "H100-SXM", 9, 0.3272, 2.1046, 9, 2.1046),  # dispatch/ and the variants
    (*_h100("models", "_run4"), "h100-host", "H100-SXM", 7, 0.3221, 2.1576, 4, 2.9056),
    (*_h100("hf_timed", "_run3"), "h100-host", "H100-SXM", 10, 0.2340, 2.8351, 6, 3.6374),
    (*_h100("kernelbench"), "default", "H100-SXM", 50, 0.2981, 1.3020, 21, 2.4918),
    (*_h100("kernelbench", "_run2"), "default", "H100-SXM", 50, 0.2870, 1.3046, 21, 2.4379),
    (*_h100("kernelbench", "_run3"), "default", "H100-SXM", 50, 0.3323, 1.3012, 21, 2.1224),
    (*_h100("kernelbench", "_run4"), "default", "H100-SXM", 50, 0.2673, 1.3024, 21, 2.9141),
    (*_h100("dispatch"), "default", "H100-SXM", 7, 0.1984, 3.2259, 5, 3.2259),
    (*_h100("dispatch", "_run2"), "default", "H100-SXM", 7, 0.1951, 3.2627, 5, 4.8852),
    (*_h100("dispatch", "_run3"), "default", "H100-SXM", 7, 0.2156, 2.6030, 5, 2.7328),
    (*_h100("dispatch", "_run4"), "default", "H100-SXM", 7, 0.1823, 3.1631, 5, 3.1631),
    (*_h100("dispatch", "_run5"), "default", "H100-SXM", 7, 0.1657, 4.7348, 6, 5.3806),
    (*_h100("models"), "default", "H100-SXM", 7, 0.1727, 2.1468, 3, 4.9527),
    (*_h100("models", "_run2"), "default", "H100-SXM", 7, 0.1735, 2.1491, 3, 5.4395),
    (*_h100("hf_timed"), "default", "H100-SXM", 10, 0.2100, 2.7414, 3, 5.0369),
    (*_h100("models", "_run3"), "default", "H100-SXM", 7, 0.1712, 2.1807, 3, 5.5440),
    (*_h100("hf_timed", "_run2"), "default", "H100-SXM", 10, 0.1747, 3.0550, 3, 6.4988),
    (*_h100("kernelbench", "_run5"), "default", "H100-SXM", 50, 0.2618, 1.3171, 21, 3.4362),
    (*_h100("dispatch", "_run6"), "default", "H100-SXM", 9, 0.1841, 5.2170, 7, 5.2170),
    (*_h100("models", "_run4"), "default", "H100-SXM", 7, 0.1819, 2.1590, 3, 5.1657),
    (*_h100("hf_timed", "_run3"), "default", "H100-SXM", 10, 0.1751, 3.2220, 3, 6.1712),
]


@pytest.mark.parametrize("rows,measured,level,host,gpu,n,median,margin,bound_by_host,host_margin", TIGHTNESS,
                         ids=[f"{t[1].parent.name}/{t[1].stem}-{t[3]}" for t in TIGHTNESS])
def test_eager_host_tightness_and_margin(rows, measured, level, host, gpu, n, median, margin, bound_by_host, host_margin):
    joined = [j for j in join(rows_path=rows, measured_path=measured, host=host, gpu=gpu) if j.level == level]
    ratios = [j.bounds["eager_host"] / j.measured_seconds for j in joined]
    dispatch = [j for j in joined if j.kind.startswith("host")]
    assert len(joined) == n
    assert statistics.median(ratios) == pytest.approx(median, abs=5e-5)
    assert 1 / max(ratios) == pytest.approx(margin, abs=5e-5)
    assert len(dispatch) == bound_by_host
    assert min(j.measured_seconds / j.bounds["eager_host"] for j in dispatch) == pytest.approx(host_margin, abs=5e-5)


# Per H100 suite: replays joined, median graphed / graph replay, the margin (least replay / graphed);
# the graphed level uses no host floor, so one line per suite.
GRAPH_TIGHTNESS = [
    ("kernelbench", "", 49, 0.1666, 1.2963),  # 30_SwinTransformerV2: no replay recorded
    ("kernelbench", "_run2", 49, 0.1666, 1.2975),
    ("kernelbench", "_run3", 49, 0.1660, 1.3067),
    ("kernelbench", "_run4", 49, 0.1657, 1.2973),
    ("dispatch", "", 7, 0.1968, 1.6948),
    ("dispatch", "_run2", 7, 0.1961, 1.6843),
    ("dispatch", "_run3", 7, 0.1962, 1.6923),
    ("dispatch", "_run4", 7, 0.1959, 1.7012),
    ("dispatch", "_run5", 7, 0.1835, 1.7110),  # the batch-1 variants (timm ResNet-50-D, ConvNeXt-Small first timed)
    ("models", "", 7, 0.1816, 2.5045),
    ("models", "_run2", 7, 0.1827, 2.4957),
    ("models", "_run3", 7, 0.1828, 2.5050),
    ("hf_timed", "", 8, 0.3621, 2.0918),  # gemma2_9b prefill, decode: graph capture failed, no replay recorded
    ("hf_timed", "_run2", 8, 0.3626, 2.0907),
    ("kernelbench", "_run5", 49, 0.1654, 1.3082),
    ("dispatch", "_run6", 9, 0.1906, 1.6993),
    ("models", "_run4", 7, 0.1807, 2.5069),
    ("hf_timed", "_run3", 8, 0.3612, 2.1028),
]


@pytest.mark.parametrize("suite,run,n,median,margin", GRAPH_TIGHTNESS)
def test_graphed_tightness_and_margin_on_the_h100(suite, run, n, median, margin):
    rows, timings, level = _h100(suite, run)
    joined = [j for j in join(rows_path=rows, measured_path=timings, host="h100-host", gpu="H100-SXM")
              if j.level == level and "graphed" in j.measured]
    ratios = [j.bounds["graphed"] / j.measured["graphed"] for j in joined]
    assert len(joined) == n
    assert statistics.median(ratios) == pytest.approx(median, abs=5e-5)
    assert 1 / max(ratios) == pytest.approx(margin, abs=5e-5)


GRAPH_CASES = [(rows, timings, host) for rows, timings, host in CASES
               if any("graphed" in r.get("measured", {}) for r in read_rows(timings))]


@pytest.mark.skipif(not GRAPH_CASES, reason="no committed CUDA-graph replay timings (rows with measured.graphed)")
@pytest.mark.parametrize("rows,timings,host", GRAPH_CASES, ids=[f"{t.parent.name}/{t.stem}-{h}" for _, t, h in GRAPH_CASES])
def test_graphed_never_above_a_graph_replay(rows, timings, host):
    joined = [j for j in join(rows_path=rows, measured_path=timings, host=host, gpu=gpu_of(rows)) if "graphed" in j.measured]
    assert joined
    assert [(j.problem, v.describe()) for j in joined for v in j.violations() if v.execution == "graphed"] == []


def test_graphed_join_catches_a_replay_below_its_bound(tmp_path):
    rows = [r for r in read_rows(ROWS) if r["level"] == "level1"][:2]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    first = join(rows_path=tmp_path / "rows.jsonl", measured_path=MEASURED)
    timings = [{"problem": f"{j.level}/{j.problem}", "measured": {
        "eager": {"min_seconds": 10 * j.bounds["eager_host"]},
        "graphed": {"min_seconds": j.bounds["graphed"] * (0.5 if k == 0 else 1.5)}}} for k, j in enumerate(first)]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(t) for t in timings))
    joined = join(rows_path=tmp_path / "rows.jsonl", measured_path=tmp_path / "t.jsonl")
    got = [(j.problem, v.level, v.execution) for j in joined for v in j.violations()]
    assert got == [(first[0].problem, "graphed", "graphed")]  # eager 10x above: no eager violation


def test_join_finds_a_timing_by_its_file_when_the_folder_differs(tmp_path):
    """Corpus rows (level "corpus") against timings named folder/file (models/x.py): joined by the
    file's name when exactly one timing has it; two such timings: not joined."""
    rows = [{**r, "level": "corpus"} for r in read_rows(ROWS) if r["level"] == "level1"][:1]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    timing = {"measured": {"eager": {"min_seconds": 1.0}}}
    (tmp_path / "one.jsonl").write_text(json.dumps({"problem": f"models/{rows[0]['problem']}", **timing}))
    assert [j.problem for j in join(rows_path=tmp_path / "rows.jsonl", measured_path=tmp_path / "one.jsonl")] == [rows[0]["problem"]]
    (tmp_path / "two.jsonl").write_text("\n".join(json.dumps({"problem": f"{d}/{rows[0]['problem']}", **timing}) for d in ("a", "b")))
    assert join(rows_path=tmp_path / "rows.jsonl", measured_path=tmp_path / "two.jsonl") == []
