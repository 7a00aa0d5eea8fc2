"""benchmarks/eager_host_gap.py on the CPU: the row's breakdown of one small eager call (ops in
program order, the Python around them, the module calls, each op priced by a host profile)."""

from __future__ import annotations

import json

import pytest

from benchmarks import eager_host_gap as gap
from solar.hardware.host import get_host

MODEL = """
import torch
from torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU())

    def forward(self, x):
        return self.body(x) + 1

def get_inputs():
    return [torch.randn(2, 8)]
"""


@pytest.mark.parametrize(
    "intervals, busy",
    [([], 0.0), ([(0, 2)], 2.0), ([(0, 2), (1, 3)], 3.0), ([(4, 5), (0, 1), (0.5, 0.75)], 2.0), ([(0, 4), (1, 2)], 4.0)],
)
def test_union_us(intervals: list, busy: float) -> None:
    assert gap.union_us(intervals) == busy


def test_cpu_row(tmp_path) -> None:
    src = tmp_path / "small.py"
    src.write_text(MODEL)
    out = tmp_path / "gap.jsonl"
    assert gap.main([str(src), str(tmp_path / "missing.py"), "--out", str(out), "--device", "cpu",
                     "--reps", "2", "--calls", "2", "--host", "h100-host", "--budget-s", "120"]) == 0
    row, missing = (json.loads(line) for line in out.read_text().splitlines())
    prof = row["profile"]
    assert [s[0] for s in prof["seq"]] == ["aten::linear", "aten::relu", "aten::add"]
    assert (prof["ops"], prof["calls"], len(prof["walls_us"])) == (3, 2, 2)
    assert prof["outside_us"] == pytest.approx(prof["wall_us"] - prof["ops_us"], abs=1e-2)
    assert row["modules"]["calls"] == 4  # Model, Sequential, Linear, ReLU
    assert sorted(row["modules"]["by_class"]) == ["Linear", "Model", "ReLU", "Sequential"]
    direct = row["module_calls"]  # the same calls counted without a profiler
    assert (direct["calls"], direct["rounds"]) == (4, 10)
    assert direct["module_us"] == pytest.approx(direct["wall_us"] - direct["direct_us"], abs=1e-2)
    floors = get_host("h100-host").floors.torch_eager_op_seconds
    assert row["floors"]["by_op"]["aten::linear"] == round(floors["aten.linear.default"] * 1e6, 4)
    assert row["floors"]["host"] == "h100-host"
    assert missing["error"].startswith("ModelFileError")


@pytest.mark.parametrize("op, name", [("aten::conv2d", "conv2d"), ("aten.conv2d.default", "conv2d"),
                                      ("aten.add_.Tensor", "add_"), ("solar.lstm.default", "solar.lstm.default")])
def test_op_name(op, name):
    assert gap.op_name(op) == name


def test_join_with_the_eager_host_row():
    from solar.backends.dispatch import Floors

    row = {"calls": [["aten.relu.default", True, 1e-6, -1, [0], []], ["aten.view.default", False, 0.0, -1, [0], []],
                     ["aten.relu.default", True, 1e-6, -1, [0], []]],
           "modules": [["L__self__", "__main__.Model"]]}
    g = {"problem": "level3/x.py", "measured": {"eager": {"min_seconds": 50e-6, "host_seconds": 40e-6}},
         "profile": {"wall_us": 42.0, "ops_us": 30.0, "outside_us": 12.0, "device_busy_us": 3.0, "ops": 3,
                     "by_op": {"aten::relu": [2, 24.0, 2.0], "aten::view": [1, 6.0, 0.0]}},
         "modules": {"calls": 1, "wall_us": 100.0, "module_us": 25.0},
         "module_calls": {"calls": 1, "wall_us": 40.0, "direct_us": 38.0, "module_us": 2.0, "rounds": 10}}
    floors = Floors("t", kernel_seconds=5e-6, any_seconds=0.5e-6, by_op={"aten.relu.default": 4e-6}, empty_module_seconds=1e-6)
    j = gap.joined(g, row, floors)
    assert j["floors_us"] == pytest.approx(4 + 0.5 + 4 + 1) and j["op_floors_us"] == pytest.approx(8.5)
    assert j["by_op"] == {"relu": [2, 2, 12.0, pytest.approx(4.0)], "view": [1, 1, 6.0, pytest.approx(0.5)]}
    assert list(j["by_op"]) == ["relu", "view"]  # 2 x 8 us missed before 1 x 5.5
    assert (j["module_share"], j["ops"], j["eager_us"]) == (0.25, (3, 3), pytest.approx(50.0))
    assert j["module_calls"] == (1, 2.0)
    empty = gap.joined({**g, "modules": {"calls": 0, "wall_us": 100.0, "module_us": 0.0}}, row, floors)
    assert empty["module_share"] is None  # a tracer that saw no module call gives no share


def test_module_calls_restores_module_call_after_a_failure() -> None:
    import torch

    original = torch.nn.Module.__call__
    layer = torch.nn.Linear(2, 2)
    with pytest.raises(RuntimeError):
        gap.module_calls(torch, lambda: layer(torch.ones(3)), "cpu", 2)
    assert torch.nn.Module.__call__ is original
    assert gap.module_calls(torch, lambda: layer(torch.ones(2)), "cpu", 3)["calls"] == 1


def test_aftereffect_rows(tmp_path) -> None:
    """benchmarks/eager_host_aftereffect.py: per file, [before, after] for each disturbance asked
    for, each in its own process; a file that is not there gets one error line."""
    from benchmarks import eager_host_aftereffect as ae

    src = tmp_path / "small.py"
    src.write_text(MODEL)
    out = tmp_path / "ae.jsonl"
    kinds = ["swap", "profile"]  # each kind is a fresh process: two of the four keep the test short
    assert ae.main([str(src), str(tmp_path / "missing.py"), "--out", str(out), "--reps", "2", "--kinds", *kinds]) == 0
    row, missing = (json.loads(line) for line in out.read_text().splitlines())
    assert row["problem"].endswith("small.py") and row["arch"] == "none (cpu)"
    assert list(row["host_us"]) == kinds and set(ae.DISTURB) == set(ae.KINDS) == {"none", "swap", "profile", "tracer"}
    assert all(len(v) == 2 and min(v) > 0 for v in row["host_us"].values())
    assert missing["host_us"] == {} and missing["error"].endswith("missing.py: no such file")


def test_replay_rows(tmp_path) -> None:
    """benchmarks/eager_host_replay.py on the CPU: the model's Python-level torch calls recorded in
    order, replayed straight and each timed alone; a file that does not build is one error line."""
    from benchmarks import eager_host_replay as rp

    src = tmp_path / "small.py"
    src.write_text(MODEL)
    out = tmp_path / "rp.jsonl"
    assert rp.main([str(src), str(tmp_path / "missing.py"), "--out", str(out), "--reps", "2", "--device", "cpu"]) == 0
    row, missing = (json.loads(line) for line in out.read_text().splitlines())
    # the Sequential's Linear and ReLU call F.linear and F.relu; the forward adds 1
    assert {k: n for k, (n, _) in row["by_name"].items()} == {
        "torch.nn.functional.linear": 1, "torch.nn.functional.relu": 1, "torch.Tensor.add": 1}
    assert row["calls"] == 3 and row["tight_us"] == pytest.approx(sum(t for _, t in row["by_name"].values()), abs=1e-2)
    assert min(row["model_us"], row["replay_us"]) > 0
    assert missing["error"].startswith("ModelFileError") and "missing.py" in missing["error"]


def test_dispatch_shapes_rows(tmp_path) -> None:
    """benchmarks/dispatch_shapes.py on the CPU: one row per (op, argument class); the classes span
    the calibration's tiny instance to a batch-8 stage in both dtypes."""
    from benchmarks import dispatch_shapes as ds
    from solar.validate.argsweep import DTYPES, SIZES

    out = tmp_path / "ds.jsonl"
    assert ds.main(["--out", str(out), "--device", "cpu", "--only", "relu"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["case"] for r in rows] == [f"{d} {s}" for d in DTYPES for s in SIZES]
    assert all(r["op"] == "relu" and r["host_us"] > 0 and r["device_us"] is None and r["features"] == "" for r in rows)
    assert all(r["environment"]["gpu"] == "none (cpu)" for r in rows)
