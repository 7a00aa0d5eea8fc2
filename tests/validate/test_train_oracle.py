"""The committed training-step timings of every host folder (benchmarks/results/<host>/train.jsonl,
`solar validate --train`) as an oracle: no level may exceed a fastest measured step it claims, as
committed and, on the H100, recomputed with the current specs (docs/BOUNDS.md §4, §13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.rows import RESULTS, read_rows
from solar.backends.levels import claims, violations

ROOT = Path(__file__).resolve().parents[2]
TRAIN = sorted(RESULTS.parent.glob("*/train.jsonl"))
ROWS = [(p.parent.name, r) for p in TRAIN for r in read_rows(p) if not r.get("error")]


def _fastest(row: dict) -> dict[str, float]:
    return {execution: t["min_seconds"] for execution, t in row["measured"].items()}


def _margin(bounds: dict[str, float], measured: dict[str, float]) -> float:
    """The least measured / bound over the (level, execution) pairs a level claims."""
    return min(t / bounds[level] for level in bounds for execution, t in measured.items() if claims(level, execution))


def test_every_host_folder_has_training_timings():
    assert {folder for folder, _ in ROWS} == {"h100", "h200"}
    assert sorted(r["problem"] for folder, r in ROWS if folder == "h100") == [
        "hf_gpt2_lm.py (train, adamw)", "tv_resnet50.py (train, adamw)"]


@pytest.mark.parametrize("folder,row", ROWS, ids=[f"{f}/{r['problem']}" for f, r in ROWS])
def test_no_committed_training_bound_above_a_step_it_claims(folder, row):
    assert row["violations"] == []
    assert violations(row["bounds"], _fastest(row)) == []


# Per folder, the least measured / bound over every row and every level that claims its execution.
MARGINS = [("h200", 1.4299), ("h100", 1.9292)]


@pytest.mark.parametrize("folder,margin", MARGINS)
def test_training_margin(folder, margin):
    got = min(_margin(r["bounds"], _fastest(r)) for f, r in ROWS if f == folder)
    assert got == pytest.approx(margin, abs=5e-5)


H100_FILES = {"tv_resnet50.py (train, adamw)": "benchmarks/train/tv_resnet50.py",
              "hf_gpt2_lm.py (train, adamw)": "benchmarks/train/hf_gpt2_lm.py"}


@pytest.mark.slow
@pytest.mark.parametrize("problem,path", sorted(H100_FILES.items()))
def test_h100_training_steps_stay_above_the_current_bounds(capsys, problem, path):
    """The H100 rows were bounded with t_min 0.5 us; the H100 spec's measured t_min (0.69 us) and
    in-graph floor raise unfused and graphed: recomputed, still below every step they claim."""
    from solar.cli import main

    row = next(r for f, r in ROWS if f == "h100" and r["problem"] == problem)
    assert main(["analyze", str(ROOT / path), "--train", "--arch", "H100-SXM", "--json"]) == 0
    bounds = {level: b["seconds"] for level, b in json.loads(capsys.readouterr().out)["bounds"].items()}
    assert bounds["unfused"] >= row["bounds"]["unfused"]
    assert violations(bounds, _fastest(row)) == []
