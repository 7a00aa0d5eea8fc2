"""Headroom (measured / bound), matching measured times to rows, and violations."""

from __future__ import annotations

import pytest

from solar.backends.levels import claims
from solar.kernelbench.headroom import join, match_problem
from solar.kernelbench.measured import Measurement
from tests.kernelbench.helpers import make_row

PROBLEMS = ["level1/1_A.py", "level1/2_B.py", "level2/1_A.py"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("level1/1_A.py", ["level1/1_A.py"]),
        ("2_B.py", ["level1/2_B.py"]),
        ("2_B", ["level1/2_B.py"]),
        ("/home/u/KernelBench/level2/1_A.py", ["level2/1_A.py"]),
        ("1_A.py", ["level1/1_A.py", "level2/1_A.py"]),  # ambiguous
        ("9_Z.py", []),
    ],
)
def test_match_problem(name, expected):
    assert match_problem(name, PROBLEMS) == expected


def _m(problem, seconds, variant="eager", arch="H100-SXM", fastest=None):
    return Measurement(problem, arch, variant, seconds, "m.json", fastest)


def test_headroom_is_measured_over_each_bound():
    row = make_row("level1/1_A.py", fused=1e-3, unfused=2e-3)
    joined = join([row], [_m("level1/1_A.py", 5e-3)])
    (entry,) = joined.entries
    assert entry.headroom("eager", "fused") == pytest.approx(5.0)
    assert entry.headroom("eager", "unfused") == pytest.approx(2.5)
    assert entry.headroom("compile", "fused") is None
    assert joined.violations == () and joined.levels == ("fused", "unfused")


def test_a_time_below_a_bound_is_a_violation():
    rows = [
        make_row("level1/1_A.py", fused=1e-3, unfused=2e-3),
        make_row("level1/2_B.py", fused=1e-3),
    ]
    joined = join(rows, [_m("1_A.py", 1.5e-3), _m("2_B.py", 0.5e-3)])
    got = sorted((f.problem, f.violation.level, f.violation.ratio) for f in joined.violations)
    assert got == [
        ("level1/1_A.py", "unfused", pytest.approx(0.75)),
        ("level1/2_B.py", "fused", pytest.approx(0.5)),
        ("level1/2_B.py", "unfused", pytest.approx(0.25)),
    ]


def test_violations_compare_the_fastest_run_and_headroom_the_median():
    row = make_row("level1/1_A.py", fused=1e-3, unfused=1e-3)
    joined = join([row], [_m("1_A.py", 1.2e-3, fastest=0.9e-3)])
    assert joined.entries[0].headroom("eager", "fused") == pytest.approx(1.2)
    assert [(f.violation.level, f.violation.measured_seconds, f.violation.ratio) for f in joined.violations] == [
        ("fused", 0.9e-3, pytest.approx(0.9)),
        ("unfused", 0.9e-3, pytest.approx(0.9)),
    ]


def test_the_eager_bound_does_not_bind_compiled_runs_but_every_other_bound_does():
    row = make_row(
        "level1/1_A.py", fused=1e-3, unfused=4e-3, more_bounds={"cache_aware": {"seconds": 2e-3}}
    )
    joined = join([row], [_m("level1/1_A.py", 1.5e-3, variant="compile")])
    assert [(f.violation.execution, f.violation.level) for f in joined.violations] == [("compile", "cache_aware")]
    assert joined.levels == ("fused", "cache_aware", "unfused")  # report order
    assert claims("unfused", "eager") and not claims("unfused", "compile")


def test_unmatched_and_ambiguous_times_are_kept_apart():
    rows = [make_row(p) for p in PROBLEMS]
    joined = join(
        rows,
        [
            _m("1_A.py", 1.0),
            _m("9_Z.py", 1.0),
            _m("2_B.py", 1.0, arch="L4"),
            _m("2_B.py", 1.0, arch=None),
        ],
    )
    assert len(joined.ambiguous) == 1 and len(joined.unmatched) == 3
    assert not any(e.measured for e in joined.entries) and not joined.has_measured


def test_later_times_of_a_pair_win_and_failed_rows_have_no_headroom():
    rows = [
        make_row("level1/1_A.py", fused=1e-3),
        make_row("level1/2_B.py", status="error", error="boom"),
    ]
    joined = join(rows, [_m("1_A.py", 9e-3), _m("1_A.py", 3e-3), _m("2_B.py", 1e-9)])
    a, b = joined.entries
    assert a.seconds("eager") == 3e-3 and b.headroom("eager", "fused") is None
    assert joined.violations == ()
