"""Host profiles (solar.hardware.host: lookup, the default below every host, --host), the graphed
level (solar.backends.graphed: in-graph kernel floor, claims graph replays only) and what a
dispatch-bound report says would lower its bound (docs/BOUNDS.md §17, §20)."""

from __future__ import annotations

import json

import pytest

from solar.backends.bounds import analyze_graph
from solar.backends.derived import explain_dispatch, graphed_level
from solar.backends.dispatch import Floors, eager_host, floors_from_host
from solar.backends.graphed import GRAPH_MARGIN, graphed_bound
from solar.backends.levels import GRAPHED, Level, claims, violations
from solar.errors import SpecError
from solar.hardware import get_spec
from solar.hardware.host import DEFAULT_HOST, get_host, list_hosts
from solar.lift import lift
from tests.backends.test_derived_levels import CHAIN, _Call, _stmts_with_instances

US = 1e-6
H200 = get_spec("H200-SXM")


def test_committed_profiles_and_the_default_below_every_host():
    hosts = {h.name: h for h in list_hosts()}
    assert set(hosts) == {"default", "h100-host", "h200-host"}
    default, h100, h200 = hosts["default"], hosts["h100-host"], hosts["h200-host"]
    assert (default.margin, h100.margin, h200.margin) == (0.45, 0.8, 0.7)
    # every floor of the default exactly 0.45 x the least the hosts measured (each host's committed
    # floor is its margin x its least; an op only one host measured: that host's)
    for op, t in default.floors.torch_eager_op_seconds.items():
        least = min(h.floors.torch_eager_op_seconds[op] / h.margin for h in (h100, h200) if op in h.floors.torch_eager_op_seconds)
        assert t == pytest.approx(least * 0.45, rel=1e-12)
    assert "aten.cumsum.default" not in h200.floors.torch_eager_op_seconds  # measured on the H100's host only
    assert default.floors.torch_eager_op_seconds["aten.cumsum.default"] == pytest.approx(
        h100.floors.torch_eager_op_seconds["aten.cumsum.default"] * 0.45 / 0.8, rel=1e-12)
    # a leaf module per class and op sequence: the least of the hosts' (each host's variant floor)
    bn = "torch.nn.modules.batchnorm.BatchNorm2d"
    for ops in ("aten.add_.Tensor aten.batch_norm.default", "aten.batch_norm.default"):
        least = min(h.floors.torch_module_ops_seconds[bn][ops] / h.margin for h in (h100, h200))
        assert default.floors.torch_module_ops_seconds[bn][ops] == pytest.approx(least * 0.45, rel=1e-12)
    # the class floor is its cheapest variant's (eval mode)
    assert h100.floors.torch_module_seconds[bn] == h100.floors.torch_module_ops_seconds[bn]["aten.batch_norm.default"]
    assert set(default.floors.torch_eager_op_seconds) == set(h100.floors.torch_eager_op_seconds) | set(h200.floors.torch_eager_op_seconds)
    assert default.floors.torch_eager_kernel_seconds == pytest.approx(0.45 * 4.247137499646669e-06, rel=1e-12)
    assert default.floors.timing_lead_seconds == max(h100.floors.timing_lead_seconds, h200.floors.timing_lead_seconds)
    assert h200.floors.torch_eager_kernel_seconds == pytest.approx(0.7 * 5.60387500012638e-06, rel=1e-12)
    assert h100.floors.torch_eager_kernel_seconds == pytest.approx(0.8 * 4.247137499646669e-06, rel=1e-12)


@pytest.mark.parametrize("given,name", [(None, DEFAULT_HOST), ("h200-host", "h200-host"), ("H200-HOST", "h200-host"),
                                        ("hardware_specs/hosts/h200-host.yaml", "h200-host")])
def test_get_host(given, name):
    assert get_host(given).name == name


@pytest.mark.parametrize("given,message", [
    ("nosuch", "unknown host profile 'nosuch'; known: default, h100-host, h200-host"),
    ("", "--host: give a host profile name"),
    ("/nonexistent/x.yaml", "/nonexistent/x.yaml"),
])
def test_get_host_refuses(given, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        get_host(given)


def test_profile_floors_and_sources():
    f = floors_from_host(get_host("h200-host"))
    assert f.host == "h200-host" and f.lead_seconds == pytest.approx(222.17600047588347 * US, rel=1e-12)
    assert f.source.startswith("host profile h200-host (Intel(R) Xeon(R) Processor; torch 2.11.0+cu130, CUDA 13.0, JAX 0.11.2")
    assert f.source.endswith("floors 0.7 x the least measured); valid for that host and framework only")
    d = floors_from_host(get_host(None))
    assert d.source.startswith("floors of the default host profile: 0.45 x the least measured on every calibrated host")
    assert d.source.endswith("calibrate yours with `solar calibrate --dispatch-only` and pass --host")


def test_graphed_level_claims_graph_replays_only():
    assert claims(Level.GRAPHED, GRAPHED) and not claims(Level.GRAPHED, "eager") and not claims(Level.GRAPHED, "compile")
    assert not claims(Level.EAGER_HOST, GRAPHED) and not claims(Level.UNFUSED, GRAPHED)
    bounds = {"fused": 1 * US, "eager_host": 10 * US, "graphed": 5 * US}  # graphed checked against graphed alone
    got = [(v.level, v.execution) for v in violations(bounds, {"eager": 4 * US, "graphed": 3 * US})]
    assert got == [("eager_host", "eager"), ("graphed", "graphed")]


# (kernel floors d_i in us, in-graph floor f in us, graphed in us): Σ max(d_i, f) less the largest
# excess (the last kernel pays only its own d_i), never below Σ d_i.
GRAPHED_CASES = [
    ((0.5, 0.5, 0.5), 0.9, 0.9 + 0.9 + 0.5),
    ((0.5, 2.0, 0.5), 0.9, 0.9 + 2.0 + 0.5),
    ((3.0, 2.0), 0.9, 5.0),
    ((0.5,), 0.9, 0.5),  # one kernel: its own floor
    ((0.5, 0.5, 0.5), 0.0, 1.5),  # no in-graph floor measured: the unfused bound
]


@pytest.mark.parametrize("device,floor,expected", GRAPHED_CASES)
def test_graphed_bound_exact(device, floor, expected):
    from dataclasses import replace

    program, _ = _stmts_with_instances(CHAIN)
    analysis = analyze_graph(lift(program), H200)
    ops = tuple(replace(op, seconds=d * US) for op, d in zip(analysis.ops, device))
    unfused = replace(analysis.unfused, seconds=sum(device) * US)
    g = graphed_bound(replace(analysis, ops=ops, unfused=unfused), floor * US, "test")
    assert g.bound.seconds == pytest.approx(expected * US, rel=1e-12)
    assert g.kernels == len(device)


def test_graphed_on_every_gpu():
    program, _ = _stmts_with_instances(CHAIN)
    graph = lift(program)
    # H200: 0.9 x the least measured in-graph interval (0.9206 us); three 0.5 us kernels
    g = graphed_level(analyze_graph(graph, H200), H200)
    f = GRAPH_MARGIN * 9.206399917602539e-07
    assert g.floor_seconds == pytest.approx(f, rel=1e-12)
    assert g.bound.seconds == pytest.approx(2 * f + 0.5 * US, rel=1e-12)
    assert "0.9 x the least in-graph kernel interval measured on H200-SXM, 0.921 us" in g.describe()
    # H100: 0.9 x its least in-graph interval (0.894 us), its measured t_min 0.9 x 0.766 us
    h100 = get_spec("H100-SXM")
    g = graphed_level(analyze_graph(graph, h100), h100)
    f = GRAPH_MARGIN * 8.940696716308594e-07
    assert (g.floor_seconds, h100.min_kernel_seconds.value) == (pytest.approx(f, rel=1e-12), 6.898e-07)
    assert g.bound.seconds == pytest.approx(2 * f + 6.898e-07, rel=1e-12)
    assert "0.9 x the least in-graph kernel interval measured on H100-SXM, 0.894 us" in g.describe()
    a100 = get_spec("A100-SXM4-80GB")
    g = graphed_level(analyze_graph(graph, a100), a100)
    assert g.bound.seconds == pytest.approx(1.5 * US, rel=1e-12)
    assert "each at least its own floor (no in-graph kernel interval measured for A100-SXM4-80GB)" in g.describe()


def test_dispatch_bound_report_says_what_would_lower_it():
    program, ops = _stmts_with_instances(CHAIN)
    analysis = analyze_graph(lift(program), H200)
    floors = Floors("test", kernel_seconds=9 * US, by_op=dict(zip(ops, (3 * US, 4 * US, 5 * US))))
    eh = eager_host(analysis, [_Call(op, k) for k, op in enumerate(ops)], floors)
    g = graphed_level(analysis, H200)
    text = explain_dispatch(eh, analysis.fused.seconds, g)
    assert text == (
        ". Dispatch binds: 3 ops dispatched, host floors 12.0 us = 100% of the 12.0 us bound. What would lower "
        "it: fusion into one kernel: fused 0.5 us; CUDA graphs (no host dispatch): graphed 2.2 us; a larger batch "
        "dispatches the same 3 ops: the device floors (1.5 us) may grow 8.0x before they, not the host, bind"
    )
    device_bound = eager_host(analysis, [_Call(op, k) for k, op in enumerate(ops)], Floors("test", kernel_seconds=0.1 * US))
    assert explain_dispatch(device_bound, analysis.fused.seconds, g) == ""


@pytest.mark.parametrize("host,phrase", [
    ([], "floors of the default host profile: 0.45 x"),
    (["--host", "h100-host"], "host profile h100-host (Intel(R) Xeon(R) Processor"),
    (["--host", "h200-host"], "host profile h200-host (Intel(R) Xeon(R) Processor"),
])
def test_cli_names_the_host_profile(tmp_path, capsys, host, phrase):
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
    assert main(["analyze", str(model), "--arch", "H100-SXM", "--json", *host]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"eager_host", "graphed"} <= set(out["bounds"])
    assert any(a.startswith("eager_host: ") and phrase in a for a in out["assumptions"])


@pytest.mark.parametrize("calibrated, kept", [
    ({}, {}),
    ({"min_kernel_seconds": {"value": 9e-7}, "device_floors": {"old": 1}}, {}),  # stale copies of the base: not kept
    ({"calibrated": {"gemm": {"value": 1.0}}, "min_kernel_seconds": {"value": 9e-7}}, {"calibrated": {"gemm": {"value": 1.0}}}),
    ({"calibrated": {}}, {}),
])
def test_a_calibrated_spec_is_its_base_spec_with_its_own_measurements(calibrated, kept):
    from benchmarks.host_profiles import calibrated_data

    base = {"name": "X", "min_kernel_seconds": {"value": 7e-7}, "calibrated": {}}
    section = {"cuda_graph_kernel_seconds": {"value": 8e-7}}
    assert calibrated_data(base, calibrated, section) == {**base, **kept, "device_floors": section}
