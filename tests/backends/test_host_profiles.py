"""benchmarks/host_profiles.py: host profiles derived from raw calibrations (one folder per host), the
margins from the run-to-run and host-to-host spread, the default below every host; and the profile
`solar calibrate --dispatch-only` writes from one run (docs/BOUNDS.md §17)."""

from __future__ import annotations

import json

import pytest
import yaml

from benchmarks.host_profiles import Host, default_profile, host_margin, host_profile, one_run, round_down, spread
from solar.hardware.host import HostProfile

US = 1e-6


@pytest.mark.parametrize("runs,expected", [
    ([{"a": 10e-6, "b": 6e-6}, {"a": 8e-6, "b": 5e-6}], (0.8, "a")),
    ([{"a": 10e-6}, {"a": 10e-6}], (1.0, "")),  # no run faster than another
    ([{"a": 10e-6}], (1.0, "")),  # one run: no spread
    ([{"v": 1e-6}, {"v": 2e-6}], (1.0, "")),  # below 3 us (a view): not read
    ([{"a": 4e-6, "b": 9e-6}, {"b": 3e-6}], (1 / 3, "b")),  # only keys two runs measured
])
def test_spread(runs, expected):
    ratio, key = spread(runs)
    assert (pytest.approx(ratio, rel=1e-12), key) == expected


@pytest.mark.parametrize("runs,expected", [
    ([{"a": 10e-6}, {"a": 8e-6}, {"a": 9e-6}], (0.8, "a")),  # the slowest run against the least
    ([{"a": 10e-6, "b": 6e-6}, {"a": 9e-6, "b": 3e-6}], (0.5, "b")),
    ([{"a": 10e-6}], (1.0, "")),  # one run: nothing to compare
    ([{"v": 1e-6}, {"v": 3e-6}], (1.0, "")),  # least below 3 us (a view): not read
])
def test_one_run(runs, expected):
    ratio, key = one_run(runs)
    assert (pytest.approx(ratio, rel=1e-12), key) == expected


@pytest.mark.parametrize("x,expected", [(0.721, 0.7), (0.75, 0.75), (0.5198, 0.5), (0.0999, 0.05), (1.0, 1.0)])
def test_round_down(x, expected):
    assert round_down(x) == expected


def _run(gpu, ops, kernel, lead=100 * US, date="2026-12-01"):
    return {
        "gpu": gpu, "date": date, "host_cpu": f"cpu of {gpu}", "torch": "2.11.0+cu130", "jax": "0.11.2",
        "method": "test", "torch_eager_op_seconds": {k: v * US for k, v in ops.items()},
        "torch_eager_kernel_seconds": kernel * US, "torch_eager_any_seconds": 0.1 * US,
        "cuda_graph_kernel_seconds": 1.0 * US, "grid_sync_seconds": 1.0 * US, "grid_barrier_seconds": None,
        "timing_lead_seconds": lead, "timing_lead": {"flush_max_seconds": lead}, "errors": {},
    }


def _hosts(tmp_path):
    runs = {
        "a": [_run("NVIDIA H200", {"aten.add.Tensor": 10, "aten.relu.default": 6}, 6),
              _run("NVIDIA H200", {"aten.add.Tensor": 8, "aten.relu.default": 5}, 5, lead=150 * US)],
        "b": [_run("NVIDIA H100 80GB HBM3", {"aten.add.Tensor": 12, "aten.relu.default": 4}, 4),
              _run("NVIDIA H100 80GB HBM3", {"aten.add.Tensor": 12, "aten.relu.default": 5}, 5)],
    }
    for name, host_runs in runs.items():
        (tmp_path / name).mkdir()
        for k, r in enumerate(host_runs):
            (tmp_path / name / f"dispatch{k}.json").write_text(json.dumps(r))
    return [Host(tmp_path / name) for name in runs]


def test_two_hosts_give_their_profiles_and_a_default_below_both(tmp_path):
    a, b = _hosts(tmp_path)
    # run-to-run: a 8/10 (add), b 4/5 (relu): both 0.8
    assert (a.factor, a.factor_key, b.factor, b.factor_key) == (pytest.approx(0.8), "aten.add.Tensor", pytest.approx(0.8), "aten.relu.default")
    pa = HostProfile.model_validate(host_profile(a, [a, b]))
    assert (pa.name, pa.margin) == ("a-host", 0.8)
    assert pa.floors.torch_eager_op_seconds == pytest.approx({"aten.add.Tensor": 6.4 * US, "aten.relu.default": 4.0 * US})
    assert pa.floors.timing_lead_seconds == 150 * US  # the largest, not scaled
    assert pa.one_run_margin == 0.6 and "1 / 0.800 above the least of 2 (aten.add.Tensor)" in pa.one_run_margin_source
    d = HostProfile.model_validate(default_profile([a, b]))
    # host-to-host: add 8 (a) vs 12 (b) -> 0.667; default margin 0.8 x 0.667 = 0.533 -> 0.5
    assert d.margin == 0.5
    assert d.floors.torch_eager_op_seconds == pytest.approx({"aten.add.Tensor": 4.0 * US, "aten.relu.default": 2.0 * US})
    assert d.floors.torch_eager_kernel_seconds == pytest.approx(2.0 * US)
    assert "host-to-host: the least host's floor of every op is at least 0.667" in d.margin_source
    for h in (a, b):  # every default floor below every host's least
        assert all(d.floors.torch_eager_op_seconds[op] < h.op_floor(op) for op in h.least["torch_eager_op_seconds"])


def test_one_dispatch_calibration_takes_at_most_the_least_one_run_margin_of_the_hosts_calibrated_twice(tmp_path):
    a, b = _hosts(tmp_path)  # both calibrated twice, margin 0.8; one run 0.8 x their least: one-run margin 0.64 -> 0.6
    (tmp_path / "c").mkdir()  # one dispatch run plus two further op runs, spread 9 / 10 -> 0.9
    (tmp_path / "c" / "dispatch1.json").write_text(json.dumps(_run("NVIDIA H100 80GB HBM3", {"aten.add.Tensor": 10}, 6)))
    c = Host(tmp_path / "c")
    c.factor, c.factor_key = 0.9, "aten.add.Tensor"
    assert host_margin(a, [a, b, c]) == (0.8, "")
    m, why = host_margin(c, [a, b, c])
    assert m == 0.6 and "one dispatch calibration: capped at 0.6, the least one-run margin" in why and "(a-host, b-host)" in why
    assert host_margin(c, [c]) == (0.9, "")  # no host calibrated twice: its own spread
    c.factor = 0.57
    assert host_margin(c, [a, b, c]) == (0.55, "")  # its own spread when lower
    profile = HostProfile.model_validate(host_profile(c, [a, b, c]))
    assert (profile.margin, profile.one_run_margin) == (0.55, None)  # one run: no one-run spread of its own


def test_calibrate_writes_a_profile_from_one_run():
    from solar.validate.calibrate import host_profile as from_one_run

    profile = HostProfile.model_validate(from_one_run(_run("NVIDIA H100 80GB HBM3", {"aten.add.Tensor": 10}, 6), "mine", "NVIDIA H100"))
    # the least one-run margin of the committed hosts: h200-host's 0.35 (one run sat 1 / 0.524 above its least)
    assert (profile.name, profile.margin) == ("mine", 0.35)
    assert "least one-run margin of the committed host profiles" in profile.margin_source
    assert profile.floors.torch_eager_op_seconds["aten.add.Tensor"] == pytest.approx(3.5 * US)
    assert profile.floors.torch_eager_kernel_seconds == pytest.approx(2.1 * US)
    yaml.safe_dump(profile.model_dump())  # writable as YAML


def test_device_floors_per_gpu_from_the_host_folders(tmp_path):
    from benchmarks.host_profiles import device_floors

    hosts = _hosts(tmp_path)
    got = {gpu: section["cuda_graph_kernel_seconds"]["value"] for gpu, section in device_floors(hosts).items()}
    # H200 also has `solar calibrate`'s own replay measurement in its committed calibrated spec
    assert got == {"H100-SXM": 1.0 * US, "H200-SXM": 9.206399917602539e-07}


def _floors(alone, chain, graph_interval, events):
    stats = lambda t: {"min_seconds": t * US, "median_seconds": 2 * t * US, "n": 10}
    kernel = {"alone": stats(alone), "back_to_back": {"duration": stats(chain), "start_to_start": stats(chain + 1)},
              "graph": {"duration": stats(chain), "start_to_start": stats(graph_interval), "events_per_kernel": stats(events)}}
    return {"environment": {"gpu": "NVIDIA H100 80GB HBM3", "cuda": "12.8"}, "empty": kernel, "one_element_add": kernel}


def test_kernel_spans_and_the_in_graph_interval_from_floors_files(tmp_path):
    from benchmarks.host_profiles import device_floors, kernel_spans

    a, b = _hosts(tmp_path)
    (tmp_path / "b" / "floors1.json").write_text(json.dumps(_floors(alone=1.8, chain=1.2, graph_interval=0.8, events=0.95)))
    b = Host(tmp_path / "b")
    spans = kernel_spans([a, b])
    assert list(spans) == ["H100-SXM"] and spans["H100-SXM"][0] == pytest.approx(1.2 * US)
    assert device_floors([a, b])["H100-SXM"]["cuda_graph_kernel_seconds"]["value"] == pytest.approx(0.8 * US)
    assert b.cuda() == "12.8"


def _sweep(rows):
    return "\n".join(json.dumps({"op": op, "case": "c", "features": f, "host_us": us, **({"empty_us": e} if e is not None else {})})
                     for op, f, us, e in rows) + "\n"


BN_TRAIN = "affine float32 rank4 stats train"


def test_argument_class_floors_from_the_sweeps_of_two_starts(tmp_path):
    from solar.validate.argsweep import CLASSES

    assert BN_TRAIN in CLASSES["aten.batch_norm.default"]
    a, b = _hosts(tmp_path)
    ops = {"aten.add.Tensor": 8, "aten.relu.default": 5, "aten.batch_norm.default": 9}
    (tmp_path / "b" / "dispatch2.json").write_text(json.dumps(_run("NVIDIA H100 80GB HBM3", ops, 4)))
    conv = "cin>=64 dense float32 kernel3x3 nchw undilated"
    (tmp_path / "b" / "dispatch_shapes_start1.jsonl").write_text(_sweep([
        ("batch_norm", f"{BN_TRAIN} x", 20.0, 0.5),  # a member (its tokens include the class's): 19.5
        ("batch_norm", "affine eval float32 rank4 stats", 11.0, 0.5),  # not a member
        ("conv2d", conv, 30.0, 0.5),  # a class swept on one start only: not taken
        ("relu", "", 6.0, 0.5),
    ]))
    (tmp_path / "b" / "dispatch_shapes_start2.jsonl").write_text(_sweep([
        ("batch_norm", BN_TRAIN, 18.0, None),  # no empty call recorded: the calibrations' largest (none here: 0)
    ]))
    b = Host(tmp_path / "b")
    assert b.class_floors() == {"aten.batch_norm.default": {BN_TRAIN: pytest.approx(18.0 * US)}}
    pb = HostProfile.model_validate(host_profile(b, [a, b]))
    assert pb.floors.torch_eager_class_seconds == {"aten.batch_norm.default": {BN_TRAIN: pytest.approx(pb.margin * 18.0 * US)}}
    assert "dispatch_shapes_start2.jsonl" in pb.sources["torch_eager_class_seconds"]
    assert any(f.endswith("dispatch_shapes_start1.jsonl") for f in pb.derived_from)
    # the default takes a class only where every host swept it: host a swept none
    assert HostProfile.model_validate(default_profile([a, b])).floors.torch_eager_class_seconds == {}
    # a class floor at or below its op's own floor is left out
    (tmp_path / "b" / "dispatch_shapes_start2.jsonl").write_text(_sweep([("batch_norm", BN_TRAIN, 1.0, 0.0)]))
    assert "torch_eager_class_seconds" not in host_profile(Host(tmp_path / "b"), [a, b])["floors"]


def test_calibrate_takes_the_argument_classes_of_its_sweep_above_their_op_floors():
    from solar.validate.calibrate import host_profile as from_one_run

    run = _run("NVIDIA H100 80GB HBM3", {"aten.add.Tensor": 10, "aten.conv2d.default": 10}, 6)
    conv = "aten.conv2d.default"
    classes = {conv: {"bias dense kernel3x3 nchw undilated": 20 * US, "cin>=64 dense float32 kernel3x3 nchw undilated": 9 * US},
               "aten.batch_norm.default": {BN_TRAIN: 16 * US}}  # no op floor: above the kernel floor (6) stays
    profile = HostProfile.model_validate(from_one_run(run, "mine", "NVIDIA H100", classes=classes))
    assert profile.floors.torch_eager_class_seconds == {
        conv: {"bias dense kernel3x3 nchw undilated": pytest.approx(7 * US)},  # 0.35 x 20; 0.35 x 9 < the op's 3.5: left out
        "aten.batch_norm.default": {BN_TRAIN: pytest.approx(5.6 * US)},
    }
    assert "argument class" in profile.sources["torch_eager_class_seconds"]
    assert "torch_eager_class_seconds" not in from_one_run(run, "mine", "NVIDIA H100")["floors"]


def test_calibrate_dispatch_only_writes_the_profile_with_classes_and_the_sweep_beside_the_raw_file(tmp_path, monkeypatch, capsys):
    """`solar calibrate --dispatch-only --raw` end to end with the device parts stood in for (no GPU
    here): the sweep's class floors reach the written profile, and the sweep lands beside the raw
    file under the name benchmarks/host_profiles.py reads."""
    from types import SimpleNamespace

    import torch

    from solar.validate import calibrate as cal

    run = _run("NVIDIA H100 80GB HBM3", {"aten.batch_norm.default": 9}, 6)
    swept = [{"op": "batch_norm", "case": "c", "features": BN_TRAIN, "empty_us": 0.0, "host_us": 20.0},
             {"op": "relu", "case": "r", "features": "", "empty_us": 0.0, "host_us": 7.0}]
    monkeypatch.setattr(cal, "require_cuda", lambda: torch)
    monkeypatch.setattr(cal, "query_device", lambda: SimpleNamespace(name="NVIDIA H100 80GB HBM3", l2_bytes=50 << 20, sm_count=132))
    monkeypatch.setattr(cal, "measure_dispatch", lambda l2, sms: dict(run))
    monkeypatch.setattr(cal, "sweep", lambda torch, dev, on_row: [on_row(dict(r)) or dict(r) for r in swept])
    monkeypatch.setattr(cal, "environment", lambda: {"gpu": "NVIDIA H100 80GB HBM3", "cuda": "13.0"})
    out, raw = tmp_path / "mine.yaml", tmp_path / "dispatch_run9.json"
    cal.calibrate(out, "H100-SXM", dispatch_only=True, raw=raw, host="mine")
    profile = HostProfile.model_validate(yaml.safe_load(out.read_text()))
    assert profile.floors.torch_eager_class_seconds == {"aten.batch_norm.default": {BN_TRAIN: pytest.approx(7 * US)}}  # 0.35 x 20
    env = {"gpu": "NVIDIA H100 80GB HBM3", "cuda": "13.0"}  # each row names its run and environment
    assert [json.loads(line) for line in (tmp_path / "dispatch_shapes_run9.jsonl").read_text().splitlines()] == [
        {**r, "run": "dispatch_run9", "environment": env} for r in swept]
    assert json.loads(raw.read_text())["gpu"] == "NVIDIA H100 80GB HBM3"
    progress = capsys.readouterr().err.splitlines()
    assert progress[0].startswith("calibrate: measuring host dispatch floors on NVIDIA H100")
    assert progress[-1] == f"calibrate: wrote host profile {out}"


@pytest.mark.parametrize("dispatch_only,out,given,expected", [
    (True, "results/box-7.yaml", None, "box-7"),  # named after the file it is written to
    (True, "results/box-7.yaml", "box-7", "box-7"),
    (True, None, "box", "box"),  # written to hardware_specs/hosts/box.yaml
    (True, None, None, "local"),
    (False, "specs/H100-SXM.yaml", None, "local"),  # --out is the calibrated spec; the profile goes to hosts/
])
def test_calibrate_names_the_profile_after_the_file_it_writes(dispatch_only, out, given, expected):
    from argparse import Namespace

    from solar.commands.validate import profile_name

    assert profile_name(Namespace(dispatch_only=dispatch_only, out=out, host_name=given)) == expected
