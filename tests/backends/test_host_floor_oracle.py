"""The host floors of the committed profiles against host times measured without a profiler on an
H100's host (docs/BOUNDS.md §17 *What remains*): every op call of an argument-class sweep
(benchmarks/dispatch_shapes.py) takes at least its floor (its op's, raised by its argument class's),
and every program's host floors (the
eager_host level's host stage, from the committed rows) are at most the host wall time of the
program's own call (benchmarks/eager_host_replay.py) — the host stage claims no more than the host
spent, whatever the device did."""

from __future__ import annotations

import statistics

import pytest

from benchmarks.eager_host_join import detail
from benchmarks.rows import ROOT, read_rows
from solar.backends.dispatch import floors_from_host
from solar.frontends.argclass import ATEN_OF
from solar.hardware.host import get_host

H100 = ROOT / "benchmarks" / "results" / "h100"
OP_KEY = {"conv2d": "aten.conv2d.default", "batch_norm": "aten.batch_norm.default", "linear": "aten.linear.default",
          "relu": "aten.relu.default", "add_": "aten.add_.Tensor", "cat": "aten.cat.default"}


def shapes(start: int) -> list[dict]:
    return read_rows(H100 / f"dispatch_shapes_start{start}.jsonl")


def replay(start: int) -> list[dict]:
    return read_rows(H100 / f"replay_start{start}.jsonl")


def rows_by_problem() -> dict[str, dict]:
    """The committed eager_host rows of the replayed programs, keyed as the replay names them."""
    out = {}
    for suite in ("kernelbench", "dispatch"):
        for row in read_rows(H100 / f"{suite}_eager_host_rows.jsonl"):
            out[f"{row['level']}/{row['problem']}"] = row
    return out


# per (start, host profile): the sweep's cases and the least measured / floor over them (the eighth
# start ran the sweep with its argument classes between: channels 8-32, bfloat16, strides, ranks; the
# h100-host's argument-class floors come from these sweeps, so its least ratio is near 1 / its margin)
SWEEPS = [
    (6, "h100-host", 132, 1.2886), (6, "default", 132, 2.5044), (6, "h200-host", 132, 1.1935),
    (7, "h100-host", 132, 1.2532), (7, "default", 132, 2.3871), (7, "h200-host", 132, 1.1506),
    (8, "h100-host", 450, 1.2526), (8, "default", 450, 2.3089), (8, "h200-host", 450, 1.1472),
    (9, "h100-host", 570, 1.3759), (9, "default", 570, 2.6327), (9, "h200-host", 570, 1.3150),  # cuDNN modes too
    (10, "h100-host", 1710, 1.2510), (10, "default", 1710, 2.4199), (10, "h200-host", 1710, 1.1802),  # three runs (solar calibrate)
    (11, "h100-host", 2070, 1.2514), (11, "default", 2070, 2.3770), (11, "h200-host", 2070, 1.1442),  # cat swept too
]


@pytest.mark.parametrize("start,host,cases,margin", SWEEPS)
def test_every_swept_call_takes_at_least_its_floor(start, host, cases, margin):
    floors = floors_from_host(get_host(host))
    sweep = shapes(start)
    assert len(sweep) == cases and all("error" not in r for r in sweep)
    ratios = [r["host_us"] / (floors.floor(OP_KEY[r["op"]], True, features=frozenset(r["features"].split())) * 1e6)
              for r in sweep]
    assert min(ratios) == pytest.approx(margin, abs=5e-5)
    assert min(ratios) > 1.05


# per (start, host profile), over the replayed programs (22; the ninth start 24, VGG-16 and the wide MLP
# added): the least host wall time / host floors and the median host floors / the calls timed alone
PROGRAMS = [
    (6, "h100-host", 22, 1.8934, 0.5185), (6, "default", 22, 3.3660, 0.2622), (6, "h200-host", 22, 1.6716, 0.5084),
    (7, "h100-host", 22, 1.7174, 0.5669), (7, "default", 22, 3.0532, 0.3017), (7, "h200-host", 22, 1.5223, 0.5874),
    (9, "h100-host", 24, 1.8647, 0.4269), (9, "default", 24, 3.3150, 0.2167), (9, "h200-host", 24, 1.6528, 0.4190),
]


@pytest.mark.parametrize("start,host,n,program_margin,floors_of_tight", PROGRAMS)
def test_host_floors_below_every_programs_call(start, host, n, program_margin, floors_of_tight):
    rows, floors = rows_by_problem(), floors_from_host(get_host(host))
    replayed = [(r, detail(rows[r["problem"]], floors)["host"] * 1e6) for r in replay(start)]
    assert len(replayed) == n
    assert min(r["model_us"] / h for r, h in replayed) == pytest.approx(program_margin, abs=5e-5)
    assert min(r["model_us"] / h for r, h in replayed) > 1.05
    assert statistics.median(h / r["tight_us"] for r, h in replayed) == pytest.approx(floors_of_tight, abs=5e-5)


@pytest.mark.parametrize("start,replay_of_model,tight_of_replay", [(6, 0.8013, 0.8556), (7, 0.7953, 0.8629), (9, 0.8116, 0.7914)])
def test_replay_splits_the_host_time(start, replay_of_model, tight_of_replay):
    """The straight replay of the recorded calls takes no longer than the model's own call (it
    leaves out the user's Python and the module machinery; within 5 %: the 128-step scan loop is
    almost all op calls, and its replay took 1.016 x its call in the ninth start), and the split the
    docs quote holds."""
    rows = replay(start)
    assert statistics.median(r["replay_us"] / r["model_us"] for r in rows) == pytest.approx(replay_of_model, abs=5e-5)
    assert statistics.median(r["tight_us"] / r["replay_us"] for r in rows) == pytest.approx(tight_of_replay, abs=5e-5)
    assert all(r["replay_us"] < 1.05 * r["model_us"] for r in rows)


# per host profile, over the ninth start's 24 programs: calls with an argument class (conv2d, batch_norm)
# grouped by program and class, and the least of (the class's least call alone at its real arguments /
# the call's floor)
CLASS_CALLS = [("h100-host", 95, 1.2402), ("default", 95, 2.5502), ("h200-host", 95, 1.2839)]


@pytest.mark.parametrize("host,groups,margin", CLASS_CALLS)
def test_every_replayed_call_takes_at_least_its_argument_class_floor(host, groups, margin):
    """The real programs' own calls, each timed alone at its arguments (`by_class`: the least call of
    each class per program), take at least the floor their argument class gives: the check of the
    classes' extrapolation from the sweep to real shapes (a 7x7 stem convolution of 3 channels, which
    the sweep's 7x7 cases of 8 or more channels do not bound, is why the 7x7 class needs 16)."""
    floors = floors_from_host(get_host(host))
    ratios = [least / (floors.floor(ATEN_OF[key.split(" | ")[0]], True, features=frozenset(key.split(" | ")[1].split())) * 1e6)
              for r in replay(9) for key, (_, _, least) in r["by_class"].items()]
    assert len(ratios) == groups
    assert min(ratios) == pytest.approx(margin, abs=5e-5)
    assert min(ratios) > 1.05
