"""The host dispatch floor of `solar provision`: the eager_host level inverted exactly in its host
floors (solar.usecases.dispatch_floor), re-priced through the level itself."""

from __future__ import annotations

import math

import pytest
import torch

from solar.api import eager_calls, analyze_loaded, load
from solar.backends.assumptions import Assumptions
from solar.backends.bounds import analyze_graph
from solar.backends.dispatch import eager_host, floors_from_host, pipeline_makespan
from solar.hardware import get_spec
from solar.hardware.host import get_host
from solar.usecases.dispatch_floor import largest_floor, makespan_curve
from solar.usecases.provision import SCALED, UNIFORM, provision_loaded

# A 3-op chain with known floors: device d = (4, 1, 2), every op dispatched at a uniform x:
# M(x) = max(7, x + 3, 2x + 2, 3x) without a head start.
CHAIN = [
    # (device, lead, target, x*)
    ((4.0, 1.0, 2.0), 0.0, 10.0, 10 / 3),  # the host binds: 3x = 10
    ((4.0, 1.0, 2.0), 0.0, 8.0, 8 / 3),
    ((1.0, 1.0, 5.0), 0.0, 10.0, 2.5),  # op 3 waits for its dispatch: 2x + 5 = 10
    ((1.0, 1.0, 5.0), 1.0, 10.0, 3.0),  # a head start of 1: 2x - 1 + 5 = 10
    ((4.0, 1.0, 2.0), 0.0, 7.0, 7 / 3),  # the target equals the device stage
]


@pytest.mark.parametrize(("device", "lead", "target", "x"), CHAIN)
def test_three_op_chain_exact_floor(device, lead, target, x):
    got = largest_floor([1.0, 1.0, 1.0], device, lead, target)
    assert got == pytest.approx(x, rel=1e-15)
    assert pipeline_makespan([got] * 3, device, lead) == pytest.approx(target, rel=1e-15)
    assert pipeline_makespan([got * (1 + 1e-9)] * 3, device, lead) > target  # the largest one


def test_floor_absent_or_unbounded():
    assert largest_floor([1.0, 1.0], [3.0, 5.0], 0.0, 7.9) is None  # the device stage alone: 8
    assert largest_floor([0.0, 0.0], [3.0, 5.0], 0.0, 8.0) == math.inf  # nothing dispatches
    # op 2 is held back by op 1's dispatch only (its own launch is inside its own dispatch)
    assert largest_floor([1.0, 0.0], [3.0, 5.0], 0.0, 10.0) == 5.0  # x + 5
    assert largest_floor([0.0, 1.0], [3.0, 5.0], 0.0, 10.0) == 10.0  # only the host's end: x
    with pytest.raises(ValueError, match="2 host weights for 3 device floors"):
        largest_floor([1.0, 1.0], [1.0, 1.0, 1.0], 0.0, 5.0)


def test_makespan_curve_is_the_exact_polyline():
    curve = makespan_curve([1.0, 1.0, 1.0], (4.0, 1.0, 2.0), 0.0, 5.0)
    assert [v for p in curve for v in p] == pytest.approx([0.0, 7.0, 7 / 3, 7.0, 5.0, 15.0], rel=1e-15)
    curve = makespan_curve([1.0, 0.0, 2.0], (1.0, 6.0, 0.5), 0.5, 4.0)
    xs = [p[0] for p in curve]
    for k in range(41):
        x = 4.0 * k / 40
        i = max(j for j, v in enumerate(xs) if v <= x) if x < 4.0 else len(xs) - 2
        (x0, y0), (x1, y1) = curve[i], curve[i + 1]
        line = y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        assert line == pytest.approx(pipeline_makespan([x, 0.0, 2 * x], (1.0, 6.0, 0.5), 0.5), rel=1e-12)


def _chain() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))


def test_provision_floor_reprices_through_the_eager_host_level(tmp_path):
    loaded = load(_chain(), [torch.randn(4, 64)])
    first = provision_loaded(loaded, 1.0, "H200-SXM", "fused")
    assert first.eager_ops == 3 and first.eager_device_seconds > 0
    target = 3 * first.eager_device_seconds
    p = provision_loaded(loaded, target, "H200-SXM", "fused")
    uniform = p.requirement(UNIFORM)
    assert uniform.value > 0 and uniform.check_seconds == pytest.approx(target, rel=1e-12)
    for floor, above in ((uniform.value, False), (uniform.value * 1.001, True)):
        report = analyze_loaded(loaded, "H200-SXM", dispatch_us=floor * 1e6)
        eh = report.bounds["eager_host"]
        assert (eh.seconds > target * (1 + 1e-12)) is above
        if not above:
            assert eh.seconds == pytest.approx(target, rel=1e-12)
    # the factor on the default host profile's floors, re-priced with every floor scaled
    scale = p.requirement(SCALED).value
    spec = get_spec("H200-SXM")
    a = analyze_graph(loaded.graph, spec, Assumptions(tf32_flags=loaded.flags))
    base = floors_from_host(get_host(None))
    for k, above in ((scale, False), (scale * 1.001, True)):
        seconds = eager_host(a, eager_calls(loaded), base.scaled(k)).bound.seconds
        assert (seconds > target * (1 + 1e-12)) is above
    assert p.dispatch_curve[0].seconds == pytest.approx(p.eager_device_seconds, rel=1e-15)
    from solar.usecases.plots import provision_plane

    provision_plane(p, str(tmp_path / "plane.png"))  # the plane and the dispatch panel
    assert (tmp_path / "plane.png").stat().st_size > 20_000


def test_provision_floor_rows_say_why_they_are_absent():
    loaded = load(_chain(), [torch.randn(4, 64)])
    dev = provision_loaded(loaded, 1.0, "H100-SXM", "fused").eager_device_seconds
    p = provision_loaded(loaded, dev / 2, "H100-SXM", "fused")
    assert p.requirement(UNIFORM).value is None and "device stage alone" in p.requirement(UNIFORM).note
    assert "device stage alone" in p.requirement(SCALED).note  # every GPU has the default host profile
    from solar.ir.dtypes import DType
    from tests.backends.test_bounds import matmul

    ir = provision_loaded(load(matmul(64, 64, 64, DType.BF16)), 1e-3, "H100-SXM", "fused")
    assert ir.eager_ops == 0 and ir.dispatch_curve == []
    assert "not a traced PyTorch forward" in ir.requirement(UNIFORM).note
