"""Host floors of the eager_host level beyond one floor per op (docs/BOUNDS.md §17): nn.Module calls
(an empty module's floor per call, a measured leaf class's floor with its ops) and recurrent ops
(call + step x steps x layers x directions), with exact values; the eager op list's module stacks
and layer-steps; the calibration fit and merge (solar.validate.dispatch.merge)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from solar.validate.dispatch import VARIANT_OPS, calibration_run, merge, rnn_fit, variant_floors
from solar.backends.dispatch import Floors, HostCall, host_floors, pipeline_makespan

US = 1e-6
CONV, RELU = "torch.nn.modules.conv.Conv2d", "torch.nn.modules.activation.ReLU"
ROOT = ("L__self__", "__main__.Model")
FLOORS = Floors(
    "test", kernel_seconds=9 * US,
    by_op={"aten.conv2d.default": 10 * US, "aten.relu_.default": 5 * US, "aten.add.Tensor": 6 * US,
           "solar.lstm.default": 100 * US},
    empty_module_seconds=1 * US, modules={CONV: 14 * US, RELU: 5.5 * US},
    rnn={"solar.lstm.default": {(256, 10): (50 * US, 2 * US), (0, 0): (40 * US, 0.0)}},
)


def test_module_calls_add_their_own_host_time_at_their_last_op():
    calls = [
        HostCall("aten.conv2d.default", True, (ROOT, ("L__self__c", CONV))),
        HostCall("aten.relu_.default", True, (ROOT, ("L__self__r", RELU))),
        HostCall("aten.add.Tensor", True, (ROOT,)),
    ]
    # conv: 10 + (14 - 10: its class floor exceeds the op's); relu: 5 + max(1, 5.5 - 5) = 6; the root
    # module (no class floor, it has children) ends at the add: 6 + 1
    assert host_floors(calls, FLOORS) == pytest.approx([14 * US, 6 * US, 7 * US], rel=1e-12)
    # a leaf module called twice (the `@1` key of its second call) pays twice
    twice = [HostCall("aten.relu_.default", True, (ROOT, ("L__self__r", RELU))),
             HostCall("aten.relu_.default", True, (ROOT, ("L__self__r@1", RELU)))]
    assert host_floors(twice, FLOORS) == pytest.approx([6 * US, 7 * US], rel=1e-12)
    # without module data (or floors), the op floors alone
    assert host_floors([HostCall(c.op, c.launches) for c in calls], FLOORS) == pytest.approx([10 * US, 5 * US, 6 * US])


BN = "torch.nn.modules.batchnorm.BatchNorm2d"
TRAIN_BN = ("aten.add_.Tensor", "aten.batch_norm.default")  # a training-mode batch norm counts its batches
VARIANTS = Floors(
    "test", kernel_seconds=9 * US, by_op={"aten.add_.Tensor": 5 * US, "aten.batch_norm.default": 12 * US},
    empty_module_seconds=1 * US, modules={BN: 14 * US},
    module_ops={BN: {TRAIN_BN: 25 * US, ("aten.batch_norm.default",): 14 * US}},
)


@pytest.mark.parametrize("ops, floors, expected_us", [
    (TRAIN_BN, VARIANTS, [5, 12 + (25 - 17)]),  # the training variant's floor: 25 less its ops' 17
    (("aten.batch_norm.default",), VARIANTS, [12 + 2]),  # the eval variant's: 14 less 12
    (("aten.batch_norm.default", "aten.add_.Tensor"), VARIANTS, [12, 5 + 1]),  # no variant runs these: class 14 < 17
    (TRAIN_BN, replace(VARIANTS, module_ops={}), [5, 12 + 1]),  # no variant floors: class 14 < 17, the empty 1
])
def test_a_leaf_that_runs_a_measured_variants_ops_pays_that_variants_floor(ops, floors, expected_us):
    calls = [HostCall(op, True, (("L__self__bn", BN),)) for op in ops]
    assert host_floors(calls, floors) == pytest.approx([t * US for t in expected_us], rel=1e-12)
    # scaled with the rest of the floors
    assert host_floors(calls, floors.scaled(0.5)) == pytest.approx([t * US / 2 for t in expected_us], rel=1e-12)


@pytest.mark.parametrize("variants, expected", [
    ({BN: [26e-6, 15e-6]}, {BN: {"aten.add_.Tensor aten.batch_norm.default": 26e-6, "aten.batch_norm.default": 15e-6}}),
    ({CONV: [20e-6, 13e-6, 13.5e-6]}, {}),  # every variant runs conv2d: the class floor says it all
    ({BN: [26e-6]}, {}),  # not the table's variants: left out
    ({RELU: [7.8e-6, -1e-9]}, {RELU: {"aten.relu.default": 7.8e-6}}),  # a slope below the loop's: no floor
])
def test_variant_floors(variants, expected):
    assert variant_floors(variants) == expected


def test_variant_ops_are_what_export_records():
    """VARIANT_OPS names, per module_table variant, the ops torch.export records for its call."""
    import torch

    from solar.frontends.torch.eager import pre_decomposition_calls
    from solar.validate.dispatch import module_table

    class Call(torch.nn.Module):
        def __init__(self, mod):
            super().__init__()
            self.mod = mod

        def forward(self, x):
            return self.mod(x)

    got = {}
    for name, fns in module_table(torch, "cpu").items():
        cells = [dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__))) for fn in fns]
        got[name] = tuple(tuple(c.op for c in pre_decomposition_calls(torch.export.export(Call(v["mod"]), (v["arg"],)).graph))
                          for v in cells)
    assert got == VARIANT_OPS


def test_recurrent_op_floor_grows_with_layer_steps():
    lstm = (ROOT, ("L__self__lstm", "torch.nn.modules.rnn.LSTM"))
    calls = [HostCall("solar.lstm.default", True, lstm, rnn=(3072, 256, 10))]
    # the fit of its shape: 50 + 2 x 3072 us; the LSTM module adds nothing (its call is inside the
    # op's floor), the root 1 us
    assert host_floors(calls, FLOORS) == pytest.approx([(50 + 2 * 3072 + 1) * US], rel=1e-12)
    assert FLOORS.floor("solar.lstm.default", True, (10, 256, 10)) == pytest.approx(70 * US)  # not the T=1 floor
    assert FLOORS.floor("solar.lstm.default", True, (3072, 128, 10)) == pytest.approx(40 * US)  # another shape
    assert FLOORS.floor("solar.lstm.default", True) == pytest.approx(100 * US)  # no shape: the op floor
    # initial states made inside the module (two zeros, 9 us each): the LSTM op pays what they leave
    made = [HostCall("aten.zeros.default", True, lstm), HostCall("aten.zeros.default", True, lstm), calls[0]]
    assert host_floors(made, FLOORS) == pytest.approx([9 * US, 9 * US, (50 + 2 * 3072 - 18 + 1) * US], rel=1e-12)
    # host-bound: the makespan is the host total less the head start
    assert pipeline_makespan(host_floors(calls, FLOORS), [400 * US], lead=222 * US) == pytest.approx(
        (50 + 2 * 3072 + 1 - 222) * US, rel=1e-12)


def test_eager_calls_carry_module_stacks_and_layer_steps(tmp_path):
    from solar.api import eager_calls, load

    f = tmp_path / "rnn.py"
    f.write_text(
        "import torch\n"
        "class Model(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lstm = torch.nn.LSTM(4, 4, 2, batch_first=True, bidirectional=True)\n"
        "        self.act = torch.nn.ReLU()\n"
        "    def forward(self, x):\n"
        "        y, _ = self.lstm(x)\n"
        "        return self.act(self.act(y))\n"
        "def get_inputs():\n    return [torch.randn(3, 5, 4)]\n"
        "def get_init_inputs():\n    return []\n"
    )
    calls = eager_calls(load(str(f)))
    assert [(c.op, c.rnn, [k for k, _ in c.modules]) for c in calls] == [
        ("aten.zeros.default", (), ["L__self__", "L__self__lstm"]),  # h0 and c0, made by nn.LSTM
        ("aten.zeros.default", (), ["L__self__", "L__self__lstm"]),
        ("solar.lstm.default", (5 * 2 * 2, 4, 3), ["L__self__", "L__self__lstm"]),  # steps x layers x dirs, hidden, batch
        ("aten.relu.default", (), ["L__self__", "L__self__act"]),
        ("aten.relu.default", (), ["L__self__", "L__self__act@1"]),
    ]
    assert calls[3].modules[1][1] == RELU and calls[0].modules[0][1].endswith(".Model")


def _call(cell, layers, directions, steps, host, hidden=8):
    return {"cell": cell, "hidden": hidden, "batch": 1, "layers": layers, "directions": directions,
            "steps": steps, "host_seconds": host, "event_seconds": None}


def test_rnn_fit_is_below_every_call():
    # host = 40 + 3 x layer-steps us, except the (2 layers, 8 steps) call that runs 16 us faster;
    # a call of another hidden size whose host time does not grow with steps
    calls = [_call("LSTM", 1, 1, 8, 64e-6), _call("LSTM", 1, 1, 40, 160e-6),
             _call("LSTM", 2, 1, 8, 72e-6), _call("LSTM", 2, 1, 40, 280e-6),
             _call("LSTM", 1, 1, 8, 30e-6, hidden=4), _call("LSTM", 1, 1, 40, 30e-6, hidden=4)]
    fits = rnn_fit(calls)
    fit = fits[("LSTM", 8, 1)]
    # slopes: steps (96/32, 208/64), layers (8/8, 120/40) us per layer-step: the least is 1
    assert fit["step_seconds"] == pytest.approx(1e-6) and fit["slopes"] == 4
    assert fit["call_seconds"] == pytest.approx(56e-6)  # min(64 - 8, 160 - 40, 72 - 16, 280 - 80)
    assert all(fit["call_seconds"] + fit["step_seconds"] * c["steps"] * c["layers"] <= c["host_seconds"] + 1e-15
               for c in calls[:4])
    assert fits[("LSTM", 4, 1)]["step_seconds"] == 0.0
    assert fits[("LSTM", 0, 0)] == {"step_seconds": 0.0, "call_seconds": pytest.approx(30e-6), "slopes": 5}


def test_merge_of_a_calibration_and_module_runs_takes_the_least():
    base = {"date": "2026-12-01", "method": "m", "torch_eager_op_seconds": {"aten.add.Tensor": 9e-6, "aten.zero_.default": 7e-6},
            "torch_eager_kernel_seconds": 9e-6, "torch_eager_any_seconds": 7e-6, "timing_lead_seconds": 2e-4,
            "grid_sync_seconds": 1.5e-6, "cuda_graph_kernel_seconds": 1e-6}
    run = lambda identity, conv, add, lstm_host, barrier: {  # noqa: E731
        "date": "2026-12-02", "module_seconds": {"torch.nn.modules.linear.Identity": identity, CONV: conv},
        "rnn_calls": [_call("LSTM", 1, 1, 8, lstm_host), _call("LSTM", 1, 1, 40, lstm_host + 64e-6)],
        "torch_eager_op_seconds": {"aten.add.Tensor": add},
        "atomic_barrier": {"barrier_seconds": barrier, "valid": barrier < 2e-6},
        "module_variant_seconds": {BN: [conv + 10e-6, conv]},
    }
    runs = [run(1.2e-6, 15e-6, 9.5e-6, 50e-6, 1.2e-6), run(1.1e-6, 16e-6, 8e-6, 60e-6, 3e-6)]
    out = merge([base, *(calibration_run(r) for r in runs)])
    assert out["torch_module_ops_seconds"] == {BN: {"aten.add_.Tensor aten.batch_norm.default": 25e-6,
                                                    "aten.batch_norm.default": 15e-6}}
    assert (out["grid_barrier_seconds"], out["grid_sync_seconds"]) == (1.2e-6, 1.2e-6)  # the invalid barrier left out
    assert out["timing_lead_seconds"] == 2e-4
    assert out["method"] == "m; the least of 1 calibrations (the lead: the largest); module-call and recurrent floors: " \
        "benchmarks/eager_host_calibrate.py (the least of 2 runs)"
    assert out["torch_empty_module_seconds"] == 1.1e-6 and out["torch_module_seconds"] == {CONV: 15e-6}
    assert out["torch_eager_op_seconds"] == {"aten.add.Tensor": 8e-6, "aten.zero_.default": 7e-6}
    assert out["torch_eager_kernel_seconds"] == 7e-6 and out["torch_eager_any_seconds"] == 7e-6
    rnn = {(r["hidden"], r["batch"]): r for r in out["torch_rnn_seconds"]["solar.lstm.default"]}
    assert rnn[(8, 1)]["step_seconds"] == pytest.approx(2e-6) and rnn[(8, 1)]["call_seconds"] == pytest.approx(34e-6)
    assert rnn[(0, 0)] == rnn[(8, 1)] | {"hidden": 0, "batch": 0}
    assert out["date"] == "2026-12-01 and 2026-12-02"


def test_sync_start_waits_for_the_start_event_before_the_call(monkeypatch):
    """time_cuda(sync_start=True): flush, synchronize, record the start, wait for it, then call (the
    host issues nothing before the GPU timestamps the start: head start 0); the default protocol
    records the start right after enqueueing the flush."""
    import torch

    from solar.validate.timing import time_cuda

    log: list[str] = []

    class Event:
        def __init__(self, enable_timing=False):
            pass

        def record(self):
            log.append("record")

        def synchronize(self):
            log.append("wait start")

        def elapsed_time(self, other):
            return 1.0

    class Flush:
        def fill_(self, value):
            log.append("flush")

    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: log.append("sync"))
    monkeypatch.setattr(torch, "empty", lambda *a, **k: Flush())
    for sync_start, expected in ((True, ["flush", "sync", "record", "wait start", "call", "record"]),
                                 (False, ["flush", "record", "call", "record"])):
        log.clear()
        t = time_cuda(lambda: log.append("call"), 1 << 20, reps=2, warmup=0, sync_start=sync_start)
        # the sync after the (empty) warm-up, two timed calls, the final sync
        assert log == ["sync", *expected, *expected, "sync"] and t.reps == 2 and t.min_seconds == 1e-3


def test_calibration_merge_keeps_the_least_module_and_recurrent_floors():
    def run(empty, conv, call, step):
        return {"date": "d", "torch": "t", "jax": "j", "method": "m", "torch_eager_op_seconds": {"aten.add.Tensor": 9e-6},
                "torch_eager_kernel_seconds": 9e-6, "torch_eager_any_seconds": 1e-7, "cuda_graph_kernel_seconds": 1e-6,
                "grid_sync_seconds": 1e-6, "timing_lead_seconds": 2e-4, "timing_lead": {}, "errors": {},
                "torch_empty_module_seconds": empty, "torch_module_seconds": {CONV: conv},
                "torch_rnn_seconds": {"solar.lstm.default": [{"hidden": 256, "batch": 10, "call_seconds": call,
                                                              "step_seconds": step}]}}
    out = merge([run(0.9e-6, 15e-6, 100e-6, 9e-6), run(0.8e-6, 16e-6, 110e-6, 8e-6)])
    assert out["torch_empty_module_seconds"] == 0.8e-6 and out["torch_module_seconds"] == {CONV: 15e-6}
    # the least call and the least step: below both runs' lines
    assert out["torch_rnn_seconds"] == {"solar.lstm.default": [
        {"hidden": 256, "batch": 10, "call_seconds": 100e-6, "step_seconds": 8e-6}]}


def test_pre_call_module_is_the_exported_module_path():
    # PreCall.module reads the path from the innermost nn_module_stack key; it must equal the
    # path torch.export records beside the key (convert.module_path), repeated calls included
    import torch

    from solar.frontends.torch.convert import module_path
    from solar.frontends.torch.eager import pre_decomposition_calls

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(self.lin(x))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([Block(), Block()])

        def forward(self, x):
            for b in self.layers:
                x = b(x)
            return x.relu()

    graph = torch.export.export(Net(), (torch.randn(2, 4),), strict=False).graph
    nodes = {n.name: n for n in graph.nodes}
    calls = pre_decomposition_calls(graph)
    assert [c.module for c in calls] == ["layers.0.lin", "layers.0.lin", "layers.1.lin", "layers.1.lin", ""]
    assert [c.module for c in calls] == [module_path(nodes[c.name]) for c in calls]


def test_warm_slope_warms_three_calls_then_times():
    from solar.validate.dispatch import LONG, RUNS, SHORT, warm_slope

    calls, syncs = [], []
    slope = warm_slope(lambda: calls.append(len(syncs)), lambda: syncs.append(len(calls)))
    assert calls[:3] == [0, 0, 0] and syncs[0] == 3  # three calls, then a sync, then the timed runs
    assert len(calls) == 3 + RUNS * (SHORT + LONG) and isinstance(slope, float)


def test_an_argument_class_raises_its_ops_floor_never_lowers_it():
    half, big = frozenset({"half"}), frozenset({"cin>=64", "float32"})
    floors = Floors("test", kernel_seconds=9 * US, by_op={"aten.conv2d.default": 10 * US},
                    by_class={"aten.conv2d.default": {half: 20 * US, big: 17 * US, frozenset({"bias"}): 4 * US},
                              "aten.batch_norm.default": {half: 16 * US}})
    conv = "aten.conv2d.default"
    assert floors.floor(conv, True) == 10 * US  # no tokens: the op's floor
    assert floors.floor(conv, True, features=frozenset({"half", "kernel3x3"})) == 20 * US  # a superset of a class
    assert floors.floor(conv, True, features=frozenset({"half", "cin>=64", "float32", "bias"})) == 20 * US  # the largest
    assert floors.floor(conv, True, features=frozenset({"float32"})) == 10 * US  # no class's tokens all present
    assert floors.floor(conv, True, features=frozenset({"bias"})) == 10 * US  # a class below the op floor: the op's
    assert floors.floor("aten.batch_norm.default", True, features=half) == 16 * US  # above the kernel floor
    assert floors.scaled(0.5).floor(conv, True, features=half) == pytest.approx(10 * US)
    calls = [HostCall(conv, True, features=half), HostCall(conv, True)]
    assert host_floors(calls, floors) == pytest.approx([20 * US, 10 * US])


def test_a_host_profiles_argument_classes_reach_the_floors():
    from solar.backends.dispatch import floors_from_host
    from solar.hardware.host import get_host

    profile = get_host("h100-host")
    floors = floors_from_host(profile)
    assert floors.by_class and all(isinstance(tokens, frozenset) for by in floors.by_class.values() for tokens in by)
    for op, by in profile.floors.torch_eager_class_seconds.items():
        for written, seconds in by.items():
            assert floors.floor(op, True, features=frozenset(written.split()) | {"extra"}) == seconds
