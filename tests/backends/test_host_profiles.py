"""benchmarks/host_profiles.py: host profiles derived from raw calibrations (one folder per host), the
margins from the run-to-run and host-to-host spread, the default below every host; and the profile
`solar calibrate --dispatch-only` writes from one run (docs/BOUNDS.md §17)."""

from __future__ import annotations

import json

import pytest
import yaml

from benchmarks.host_profiles import Host, default_profile, host_margin, host_profile, round_down, spread
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
    d = HostProfile.model_validate(default_profile([a, b]))
    # host-to-host: add 8 (a) vs 12 (b) -> 0.667; default margin 0.8 x 0.667 = 0.533 -> 0.5
    assert d.margin == 0.5
    assert d.floors.torch_eager_op_seconds == pytest.approx({"aten.add.Tensor": 4.0 * US, "aten.relu.default": 2.0 * US})
    assert d.floors.torch_eager_kernel_seconds == pytest.approx(2.0 * US)
    assert "host-to-host: the least host's floor of every op is at least 0.667" in d.margin_source
    for h in (a, b):  # every default floor below every host's least
        assert all(d.floors.torch_eager_op_seconds[op] < h.op_floor(op) for op in h.least["torch_eager_op_seconds"])


def test_one_dispatch_calibration_takes_at_most_the_least_margin_of_the_hosts_calibrated_twice(tmp_path):
    a, b = _hosts(tmp_path)  # both calibrated twice, margin 0.8
    (tmp_path / "c").mkdir()  # one dispatch run plus two further op runs, spread 9 / 10 -> 0.9
    (tmp_path / "c" / "dispatch1.json").write_text(json.dumps(_run("NVIDIA H100 80GB HBM3", {"aten.add.Tensor": 10}, 6)))
    c = Host(tmp_path / "c")
    c.factor, c.factor_key = 0.9, "aten.add.Tensor"
    assert host_margin(a, [a, b, c]) == (0.8, "")
    m, why = host_margin(c, [a, b, c])
    assert m == 0.8 and "one dispatch calibration: capped at 0.8" in why and "(a-host, b-host)" in why
    assert host_margin(c, [c]) == (0.9, "")  # no host calibrated twice: its own spread
    c.factor = 0.62
    assert host_margin(c, [a, b, c]) == (0.6, "")  # its own spread when lower
    assert HostProfile.model_validate(host_profile(c, [a, b, c])).margin == 0.6


def test_calibrate_writes_a_profile_from_one_run():
    from solar.validate.calibrate import host_profile as from_one_run

    profile = HostProfile.model_validate(from_one_run(_run("NVIDIA H100 80GB HBM3", {"aten.add.Tensor": 10}, 6), "mine", "NVIDIA H100"))
    assert (profile.name, profile.margin) == ("mine", 0.7)  # the least committed host margin
    assert profile.floors.torch_eager_op_seconds["aten.add.Tensor"] == pytest.approx(7 * US)
    assert profile.floors.torch_eager_kernel_seconds == pytest.approx(4.2 * US)
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
