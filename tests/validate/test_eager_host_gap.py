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
    floors = get_host("h100-host").floors.torch_eager_op_seconds
    assert row["floors"]["by_op"]["aten::linear"] == round(floors["aten.linear.default"] * 1e6, 4)
    assert row["floors"]["host"] == "h100-host"
    assert missing["error"].startswith("ModelFileError")
