"""Per-op measured headroom (solar.api.join_measured_ops, solar.report.measured_ops): profiled
top-level ATen ops joined to the eager calls solar records, each against its bound in context,
ranked by the time lost."""

from __future__ import annotations

import json
from types import SimpleNamespace as NS

import pytest
import torch

from solar.api import analyze_loaded, eager_calls, join_measured_ops, load
from solar.backends.assumptions import Assumptions
from solar.backends.bounds import analyze_graph
from solar.backends.dispatch import eager_stages
from solar.cli import main
from solar.errors import UsageError
from solar.hardware import get_spec
from solar.report.measured_ops import read_rows
from solar.validate.per_op import attribute, profile_ops

MODEL = '''import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))

def get_inputs():
    return [torch.randn(4, 64)]

def get_init_inputs():
    return []
'''
NAMES = ["aten::linear", "aten::relu", "aten::linear"]


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    path = tmp_path_factory.mktemp("ops") / "chain.py"
    path.write_text(MODEL)
    loaded = load(str(path))
    a = analyze_graph(loaded.graph, get_spec("H200-SXM"), Assumptions(tf32_flags=loaded.flags))
    bounds = eager_stages(a, eager_calls(loaded)).device[1:]
    return path, loaded, bounds


def _row(names, seconds, unattributed=0.0):
    ops = [{"index": i, "op": n, "kernels": 1, "kernel_seconds": s} for i, (n, s) in enumerate(zip(names, seconds))]
    return {"problem": "chain.py", "ops": ops, "unattributed_kernel_seconds": unattributed,
            "total_kernel_seconds": sum(seconds) + unattributed}


def test_each_op_against_its_bound_ranked_by_time_lost(chain):
    _, loaded, bounds = chain
    assert len(bounds) == 3 and all(b > 0 for b in bounds)
    lost = [3e-6, 1e-6, 5e-6]
    mo = join_measured_ops(loaded, "H200-SXM", _row(NAMES, [b + x for b, x in zip(bounds, lost)]))
    assert (mo.matched, mo.unmatched_measured, mo.unmatched_calls, mo.violations) == (3, 0, 0, [])
    assert [o.index for o in mo.ops] == [2, 0, 1]
    assert [o.bound_seconds for o in mo.ops] == [bounds[2], bounds[0], bounds[1]]
    assert [o.lost_seconds for o in mo.ops] == pytest.approx([5e-6, 3e-6, 1e-6], rel=1e-9)
    below = join_measured_ops(loaded, "H200-SXM", _row(NAMES, [bounds[0] * 0.5, bounds[1], bounds[2]]))
    assert len(below.violations) == 1 and below.violations[0].startswith("aten.linear.default #0")


def test_ops_one_side_lacks_cost_only_themselves(chain):
    _, loaded, _ = chain
    names = ["aten::linear", "aten::empty", "aten::relu"]  # an extra op, and the last one missing
    mo = join_measured_ops(loaded, "H200-SXM", _row(names, [1.0, 1.0, 1.0]))
    assert (mo.matched, mo.unmatched_measured, mo.unmatched_calls) == (2, 1, 1)
    assert sorted(o.index for o in mo.ops) == [0, 1]


def test_cpu_profile_gives_the_join_keys(chain):
    """On the CPU the profiler records the op sequence without kernels: it joins every eager call,
    and each op's zero kernel time is below its bound (how a violation shows)."""
    path, loaded, _ = chain
    import importlib.util

    torch.manual_seed(0)

    spec = importlib.util.spec_from_file_location("chain_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.Model()
    row = profile_ops(model, mod.get_inputs(), 1 << 20, reps=2, warmup=1, device="cpu")
    assert [o["op"] for o in row["ops"]] == NAMES and row["reps"] == 2 and row["note"] == ""
    mo = join_measured_ops(loaded, "H200-SXM", {**row, "problem": "chain.py"})
    assert (mo.matched, mo.unmatched_measured, mo.unmatched_calls) == (3, 0, 0)
    assert len(mo.violations) == 3


def _event(name, start, parent=None, kernels=(), device="CPU", end=None):
    e = NS(name=name, device_type=f"DeviceType.{device}", cpu_parent=parent, cpu_children=[],
           kernels=[NS(duration=k) for k in kernels], time_range=NS(start=start, end=start + 1 if end is None else end))
    if parent is not None:
        parent.cpu_children.append(e)
    return e


def test_attribution_of_kernels_to_top_level_ops():
    """Kernels count for the top-level op whose subtree launched them; the flush between reps is
    outside; device time no CPU event launched is unattributed; the fastest rep per op."""
    events = [_event("aten::fill_", 0, kernels=[5.0])]
    for k in range(2):
        rep = _event(f"solar_rep_{k}", 10 + 100 * k)
        lin = _event("aten::linear", 11 + 100 * k, rep)
        mm = _event("aten::addmm", 12 + 100 * k, lin, kernels=[3.0 + k, 1.0])
        relu = _event("aten::relu", 20 + 100 * k, rep, kernels=[2.0 - 0.5 * k])
        events += [rep, lin, mm, relu, _event("cudaLaunchKernel", 13 + 100 * k, mm)]
    events += [_event("kernel", 0, device="CUDA", end=d) for d in (5.0, 3.0, 1.0, 2.0, 4.0, 1.0, 1.5, 7.0)]
    events.append(_event("solar_rep_0", 0, device="CUDA", end=50.0))  # the range on the GPU timeline
    out = attribute(events, 2)
    assert [(o["op"], o["kernels"]) for o in out["ops"]] == [("aten::linear", 2), ("aten::relu", 1)]
    assert [o["kernel_seconds"] for o in out["ops"]] == pytest.approx([4e-6, 1.5e-6], rel=1e-12)
    assert out["unattributed_kernel_seconds"] == pytest.approx(3.5e-6, rel=1e-12)  # the 7 µs kernel / 2 reps
    assert out["outside_kernel_seconds"] == pytest.approx(5e-6, rel=1e-12)
    assert out["total_kernel_seconds"] == pytest.approx(6e-6 + 3.5e-6, rel=1e-12)


def test_cli_and_api(chain, tmp_path, capsys):
    path, loaded, bounds = chain
    rows = tmp_path / "ops.jsonl"
    other = {**_row(NAMES, [1.0, 1.0, 1.0]), "problem": "level2/other.py"}
    rows.write_text("\n".join(json.dumps(r) for r in (other, _row(NAMES, [b + 1e-6 for b in bounds], 2e-6))))
    assert main(["analyze", str(path), "--arch", "H200-SXM", "--measured-ops", str(rows), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    mo = out["measured_ops"]
    assert mo["matched"] == 3 and mo["unattributed_seconds"] == 2e-6 and mo["violations"] == []
    kinds = [o["kind"] for o in out["insights"]["opportunities"]]
    assert kinds.count("measured op") == 4  # three ops and the unattributed time
    report = analyze_loaded(loaded, "H200-SXM", measured_ops=_row(NAMES, [b + 1e-6 for b in bounds]))
    assert report.measured_ops.matched == 3
    with pytest.raises(UsageError, match="0 rows for 'nothere.py'"):
        read_rows(rows, "nothere.py")
    assert main(["analyze", str(path), "--measured-ops", str(tmp_path / "missing.json")]) == 2
