"""benchmarks/device_floors.span_stats, the statistics of queued kernels' spans that the chained
and graphed measurements share: durations, start-to-start intervals within a round (never across
rounds), and each round's span per kernel."""

from __future__ import annotations

import pytest

from benchmarks.device_floors import span_stats

# rounds of (start, end) seconds -> (durations, intervals, span per kernel): min, median, count
CASES = [
    ([[(0.0, 1.0), (2.0, 2.5), (3.0, 4.0)]], ((0.5, 1.0, 3), (1.0, 1.5, 2), (4 / 3, 4 / 3, 1))),
    ([[(0.0, 2.0)], [(10.0, 11.0), (11.5, 12.0)]], ((0.5, 1.0, 3), (1.5, 1.5, 1), (1.0, 1.5, 2))),
]


@pytest.mark.parametrize("rounds,expected", CASES)
def test_span_stats_over_rounds(rounds, expected):
    got = span_stats(rounds)
    assert list(got) == ["duration", "start_to_start", "span_per_kernel"]
    assert [(s["min_seconds"], s["median_seconds"], s["n"]) for s in got.values()] == [
        pytest.approx(e) for e in expected
    ]
