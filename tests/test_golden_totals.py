"""Every problem of the suite and every example gives the totals and bounds recorded in
tests/golden/totals.json (written by `python benchmarks/golden_totals.py --update`). A refactoring of
the IR, lifting or backends must leave them unchanged, or explain each difference in docs/BOUNDS.md.
Each program also round-trips through the printer and the parser."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.golden_totals import GOLDEN, differences, loaded_totals, problem_paths  # noqa: E402
from solar.api import load  # noqa: E402
from solar.ir.parser import parse_program  # noqa: E402

PATHS = problem_paths()
GOLDEN_TOTALS = json.loads(GOLDEN.read_text())


def test_golden_file_lists_every_problem():
    assert sorted(GOLDEN_TOTALS) == sorted(PATHS)


@pytest.mark.parametrize("key", sorted(PATHS))
def test_problem_round_trips_and_totals_match_golden(key):
    loaded = load(str(PATHS[key]))
    text = str(loaded.program)
    assert str(parse_program(text)) == text  # (Const(nan) != Const(nan): compare the text)
    diff = differences(GOLDEN_TOTALS[key], loaded_totals(loaded))
    assert not diff, f"{key}: " + "; ".join(diff)
