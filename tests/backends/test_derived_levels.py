"""The eager_host level (pipeline makespan over eager ops with dispatch floors) and the recurrence
level (critical path of in-order loops): exact values on small programs (docs/BOUNDS.md §15, §16)."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import analyze_graph
from solar.backends.dispatch import Floors, eager_host, pipeline_makespan
from solar.backends.derived import with_levels
from solar.backends.recurrence import critical_path, find_chains
from solar.hardware import get_spec
from solar.ir.parser import parse_program
from solar.lift import lift

US = 1e-6
H200 = get_spec("H200-SXM")


def test_pipeline_makespan_three_ops_exact():
    # host floors 5 us each; device 2, 10, 1 us. C1 = 0 + 2, C2 = max(2, 5) + 10, C3 = max(15, 10) + 1
    assert pipeline_makespan([5, 5, 5], [2, 10, 1]) == 16
    # a head start of 3: C1 = 2, C2 = max(2, 2) + 10 = 12, C3 = max(12, 7) + 1 = 13; A3 - 3 = 12
    assert pipeline_makespan([5, 5, 5], [2, 10, 1], lead=3) == 13
    # host-bound: the last dispatch ends at 15 > device
    assert pipeline_makespan([5, 5, 5], [1, 1, 1]) == 15


def _closed_form(a, d, lead):
    """max(A_n - lead, Σd, max_k (A_{k-1} - lead + Σ_{i>=k} d_i)): the same makespan, derived as
    the longest path of the pipeline's precedence graph."""
    n = len(a)
    best = max(sum(a) - lead, sum(d))
    for k in range(n):
        best = max(best, sum(a[:k]) - lead + sum(d[k:]))
    return best


def test_pipeline_makespan_is_the_longest_path():
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 9)
        a = [rng.choice([0, 1, 2, 5]) for _ in range(n)]
        d = [rng.choice([0, 1, 3, 8]) for _ in range(n)]
        lead = rng.choice([0, 2, 7])
        assert pipeline_makespan(a, d, lead) == _closed_form(a, d, lead)


CHAIN = """program chain3 {
  input x: f32[64]
  output y: f32[64]
  temp a: f32[64]
  temp b: f32[64]
  for i in 0..64:
    a[i] = max(x[i], 0)
  for i in 0..64:
    b[i] = a[i] + 1
  for i in 0..64:
    y[i] = b[i] * 2
}
"""


class _Call:
    def __init__(self, op, instance, view=False):
        self.op, self.instance, self.view = op, instance, view


def _stmts_with_instances(text):
    from dataclasses import replace

    from solar.ir.nodes import Origin

    program = parse_program(text)
    ops = ("aten.relu.default", "aten.add.Tensor", "aten.mul.Tensor")
    return program.with_stmts(
        replace(s, origin=Origin(ops[k], k)) for k, s in enumerate(program.stmts)
    ), ops


def test_eager_host_three_op_chain_known_floors():
    program, ops = _stmts_with_instances(CHAIN)
    analysis = analyze_graph(lift(program), H200)
    assert [op.seconds for op in analysis.ops] == [0.5 * US] * 3  # each tiny kernel: t_min
    floors = Floors("test", kernel_seconds=9 * US, by_op=dict(zip(ops, (3 * US, 4 * US, 5 * US))))
    calls = [_Call(ops[0], 0), _Call("aten.view.default", None, True), _Call(ops[1], 1), _Call(ops[2], 2)]
    eh = eager_host(analysis, calls, floors)
    # host: 3, 0 (a view without a floor), 4, 5 us; C = 0.5, 3.5, 3.5, 7.5; A_n = 12 us
    assert eh.bound.seconds == pytest.approx(12 * US, rel=1e-12)
    assert (eh.ops, eh.views, eh.bound.bottleneck) == (4, 1, "dispatch")
    # a view with its own floor of 1 us delays the host: 13 us
    floors = Floors("test", kernel_seconds=9 * US, any_seconds=1 * US, by_op=floors.by_op)
    assert eager_host(analysis, calls, floors).bound.seconds == pytest.approx(13 * US, rel=1e-12)
    # device-bound: each op 0.5 us on the device, host 0.1 us: 0.1 + 3 x 0.5 ... first op starts at 0
    fast = Floors("test", kernel_seconds=0.1 * US)
    assert eager_host(analysis, calls[:1] + calls[2:], fast).bound.seconds == pytest.approx(1.5 * US, rel=1e-12)


def test_eager_host_never_below_unfused():
    program, ops = _stmts_with_instances(CHAIN)
    analysis = analyze_graph(lift(program), H200)
    eh = eager_host(analysis, [_Call(ops[0], 0)], Floors("test", kernel_seconds=0.0))  # calls miss two ops
    assert eh.bound.seconds == pytest.approx(analysis.unfused.seconds, rel=1e-12)


def _rnn(layers: int, steps: int = 10, n: int = 1024) -> str:
    lines = [f"program rnn{layers} {{", f"  input x: f32[{steps}, {n}]"]
    lines += [f"  input w{k}: f32[{n}, {n}]" for k in range(layers)]
    lines += [f"  temp h{k}: f32[{steps + 1}, {n}]" for k in range(layers)]
    lines += [f"  output y: f32[{n}]"]
    for k in range(layers):
        src = "x[s, i]" if k == 0 else f"h{k - 1}[s + 1, i]"
        lines += [f"  for i in 0..{n}:", f"    h{k}[0, i] = 0"]
        lines += [f"  for s in 0..{steps} in order {{", f"    for i in 0..{n}:", f"      h{k}[s + 1, i] = {src}"]
        lines += [f"    for i in 0..{n}, r in 0..{n}:", f"      h{k}[s + 1, i] += h{k}[s, r] * w{k}[i, r]", "  }"]
    lines += [f"  for i in 0..{n}:", f"    y[i] = h{layers - 1}[{steps}, i]", "}"]
    return "\n".join(lines) + "\n"


def test_ten_step_recurrence_exact():
    program = parse_program(_rnn(1))
    graph = lift(program)
    chains = find_chains(graph)
    assert [(c.steps, c.carried, len(c.stmt_ids), len(c.body_ids)) for c in chains] == [(10, ("h0",), 1, 2)]
    analysis = with_levels(analyze_graph(graph, H200), graph, H200, Assumptions(), grid_sync_seconds=1 * US)
    rec = {b.level: b for b in analysis.levels}["recurrence"]
    t = 2 * 1024 * 1024 / H200.simt_rate("fp32")  # one step's MACs on the FMA pipe, whole GPU
    assert min(132 * t, t + US) == t + US
    assert rec.seconds == pytest.approx(10 * (t + US), rel=1e-12)
    assert rec.bottleneck == "steps" and rec.seconds > analysis.cache_aware.seconds
    assert any("10 dependent steps" in line for line in analysis.notes)


def test_two_layer_recurrence_is_a_wavefront():
    program = parse_program(_rnn(2))
    graph = lift(program)
    analysis = with_levels(analyze_graph(graph, H200), graph, H200, Assumptions(), grid_sync_seconds=1 * US)
    rec = {b.level: b for b in analysis.levels}["recurrence"]
    t = 2 * 1024 * 1024 / H200.simt_rate("fp32")
    assert rec.seconds == pytest.approx(11 * (t + US), rel=1e-12)  # T + L - 1 dependent steps


def test_one_sm_step_when_the_sync_costs_more():
    f, path, best, steps = critical_path([10], [1e-9], [set()], 132, 1e-6)
    assert f == [pytest.approx(132e-9)] and best == pytest.approx(10 * 132e-9) and steps == 10


def test_independent_chains_do_not_add():
    # two directions of a bidirectional layer, then a layer fed by both: 10 + 1 steps, not 20
    f, path, best, steps = critical_path([10, 10, 10], [1.0, 1.0, 1.0], [set(), set(), {0, 1}], 1, 0.0)
    assert best == 11 and steps == 11


def test_loop_without_carry_is_no_chain():
    text = """program par {
  input x: f32[10, 8]
  output y: f32[10, 8]
  for s in 0..10 in order {
    for i in 0..8:
      y[s, i] = x[s, i] * 2
  }
}
"""
    assert find_chains(lift(parse_program(text))) == ()


def test_cli_reports_eager_host_with_dispatch_us(tmp_path, capsys):
    from solar.cli import main

    model = tmp_path / "three.py"
    model.write_text(
        "import torch\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return (torch.relu(x) + 1) * 2\n"
        "def get_inputs():\n    return [torch.randn(64)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    assert main(["analyze", str(model), "--arch", "H100-SXM", "--json", "--dispatch-us", "5"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bounds"]["eager_host"]["seconds"] == pytest.approx(15 * US, rel=1e-12)  # 3 ops x 5 us
    assert out["bounds"]["eager_host"]["bottleneck"] == "dispatch"
    assert any("--dispatch-us 5" in a for a in out["assumptions"])
    assert main(["analyze", str(model), "--arch", "H100-SXM", "--json"]) == 0  # no --host: the default profile
    out = json.loads(capsys.readouterr().out)
    assert "eager_host" in out["bounds"]
    assert any("floors of the default host profile: 0.45 x the least measured on every calibrated host" in a
               and "calibrate yours with `solar calibrate --dispatch-only`" in a for a in out["assumptions"])


@pytest.mark.parametrize("bad", ["0", "-3", "nan"])
def test_dispatch_us_must_be_positive(bad, tmp_path, capsys):
    from solar.cli import main

    assert main(["analyze", "x.py", "--dispatch-us", bad]) == 2
    assert "dispatch-us" in capsys.readouterr().err


def test_argument_classes_raise_the_host_floors_of_their_calls(tmp_path, capsys):
    """A training-mode batch norm and a 64-channel float32 3x3 convolution (classes of the H100 host's
    profile): with that profile their floors are their classes', the assumption says how many calls a
    class priced, and the bound exceeds the same program under the op floors alone."""
    from solar.backends.dispatch import floors_from_host
    from solar.cli import main
    from solar.hardware.host import get_host

    model = tmp_path / "convbn.py"
    model.write_text(
        "import torch\n"
        "class Model(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = torch.nn.Conv2d(64, 64, 3, padding=1, bias=False)\n"
        "        self.bn = torch.nn.BatchNorm2d(64)\n"
        "    def forward(self, x):\n"
        "        return self.bn(self.conv(x))\n"
        "def get_inputs():\n    return [torch.randn(1, 64, 8, 8)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    assert main(["analyze", str(model), "--arch", "H100-SXM", "--json", "--host", "h100-host"]) == 0
    out = json.loads(capsys.readouterr().out)
    line = next(a for a in out["assumptions"] if a.startswith("eager_host: host profile h100-host"))
    assert "2 priced by their argument class" in line
    floors = floors_from_host(get_host("h100-host"))
    classes = floors.by_class
    conv = classes["aten.conv2d.default"][frozenset("cin>=64 dense float32 kernel3x3 nchw undilated".split())]
    bn = classes["aten.batch_norm.default"][frozenset("affine float32 rank4 stats train".split())]
    assert min(conv - floors.by_op["aten.conv2d.default"], bn - floors.by_op["aten.batch_norm.default"]) > 0
    assert main(["analyze", str(model), "--arch", "H100-SXM", "--json"]) == 0  # the default profile: no classes
    assert not any("argument class" in a for a in json.loads(capsys.readouterr().out)["assumptions"])
