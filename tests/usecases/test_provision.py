"""solar provision: each returned amount makes its term equal the target (exact inverses)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from solar.api import load
from solar.backends import Assumptions, analyze
from solar.backends.cache import cache_aware_traffic
from solar.cli import main
from solar.errors import UsageError
from solar.hardware import get_spec, list_specs
from solar.hardware.spec import Sourced
from solar.ir.dtypes import DType
from solar.lift import lift
from solar.usecases.frontier import cache_aware_bytes_at
from solar.usecases.provision import provision_loaded
from tests.backends.test_bounds import matmul
from tests.backends.test_cache_aware import softmax

H100 = get_spec("H100-SXM")


def _with_bw(spec, bw):
    dram = spec.dram.model_copy(update={"bandwidth_bytes_per_s": Sourced(value=bw, source="test")})
    return spec.model_copy(update={"dram": dram})


@pytest.mark.parametrize("level", ["fused", "cache_aware"])
@pytest.mark.parametrize("target_s", [1e-3, 3.7e-5, 2.5e-4])
def test_bandwidth_makes_the_memory_term_equal_the_target(level: str, target_s: float) -> None:
    prog = softmax(64, 4096)
    p = provision_loaded(load(prog), target_s, "H100-SXM", level)
    bw = p.requirement("dram bandwidth").value
    nbytes = analyze(prog, H100).totals.dram_bytes  # cache-aware = compulsory here (rows fit)
    assert bw == pytest.approx(nbytes / target_s, rel=1e-15)
    a = analyze(prog, _with_bw(H100, bw))
    bound = a.fused if level == "fused" else a.cache_aware
    assert bound.memory_seconds == target_s
    assert p.requirement("dram bandwidth").check_seconds == target_s


def test_tensor_and_simt_rates_are_the_closed_forms() -> None:
    """A box matmul of n MACs: alone on a path of rate ρ with the FMA pipe beside it the compute
    term is n / (ρ/2 + fma); fp32 under `exact` runs on the FMA pipe only: n / (simt/2)."""
    n = 2048**3
    target = 1e-5  # memory term 7.5 µs, compute term 14.3 µs on an H100
    p = provision_loaded(load(matmul(2048, 2048, 2048, DType.BF16)), target, "H100-SXM", "fused")
    assert p.memory_seconds < target < p.compute_seconds
    fma = max(H100.simt_rate("bf16"), H100.simt_rate("fp32")) / 2
    assert p.requirement("tensor bf16").value == pytest.approx(2 * (n / target - fma), rel=1e-9)
    assert p.requirement("tensor bf16").check_seconds == pytest.approx(target, rel=1e-9)
    # the SIMT pipes alone: the tensor cores carry their share, so less SIMT is needed
    simt = p.requirement("SIMT rates").value
    tensor = H100.tensor_rate("bf16") / 2
    assert simt == pytest.approx(
        max(0.0, n / target - tensor) * 2 * H100.simt_rate("fp32") / H100.simt_rate("bf16"),
        rel=1e-9,
        abs=1e-3,
    )
    # the least SM clock: the compute term scales with 1 / clock (rates scale with it)
    clock = p.requirement("SM clock (all compute rates)").value
    assert clock == 1980 * p.compute_seconds / target
    locked = provision_loaded(
        load(matmul(2048, 2048, 2048, DType.BF16)), target, "H100-SXM", "fused", clock_mhz=clock
    )
    assert locked.compute_seconds == pytest.approx(target, rel=1e-12)
    p = provision_loaded(load(matmul(2048, 2048, 2048)), 1e-4, "H100-SXM", "fused")
    assert p.requirement("SIMT rates").value == pytest.approx(2 * n / 1e-4, rel=1e-9)
    assert not any(r.resource.startswith("tensor") for r in p.requirements)  # f32 exact: no path


def test_fp8_path_on_a_gpu_without_one() -> None:
    """On an A100 (no fp8 path) fp8 MACs run on fp16/bf16; an fp8 path helps only when those
    cannot meet the target: then it must carry n / target MACs less the FMA pipe's share."""
    a100 = get_spec("A100-SXM4-80GB")
    n = 1024**3
    prog = load(matmul(1024, 1024, 1024, DType.F8E4M3))
    loose = provision_loaded(prog, 1e-2, "A100-SXM4-80GB", "fused")
    assert loose.requirement("tensor fp8").value == 0.0
    assert loose.requirement("tensor fp8").like_value is None
    tight = provision_loaded(prog, 1e-6, "A100-SXM4-80GB", "fused")
    # the fp8 and fp16 paths share the tensor cores: a faster fp8 path carries all their MACs
    other = a100.simt_rate("fp32") / 2
    assert tight.requirement("tensor fp8").value is None  # memory alone exceeds 1 µs
    assert "memory term" in tight.requirement("tensor fp8").note
    mid = 3e-6
    p = provision_loaded(prog, mid, "A100-SXM4-80GB", "fused")
    assert p.memory_seconds < mid < p.compute_seconds
    assert p.requirement("tensor fp8").value == pytest.approx(2 * (n / mid - other), rel=1e-9)


def test_onchip_capacity_is_the_least_whole_byte() -> None:
    """Softmax rows of 2^22 fp32 elements (16 MiB) are needed again after their statistics: the
    re-read pattern forces groups·max(0, row bytes − S); with a budget of E bytes above the
    compulsory ones the least S is row bytes − E / groups."""
    rows, cols = 4, 1 << 22
    prog = softmax(rows, cols)
    graph = lift(prog)
    tr = cache_aware_traffic(graph, H100)
    assert cache_aware_bytes_at(graph, tr, int(H100.onchip_bytes)) == tr.cache_aware_bytes
    row_bytes = cols * 4
    s_star = row_bytes - 3_000_000
    target = (tr.compulsory_bytes + rows * (row_bytes - s_star)) / H100.dram_bytes_per_s
    p = provision_loaded(load(prog), target, "H100-SXM")
    s = p.requirement("on-chip capacity").value
    assert s == s_star
    assert cache_aware_bytes_at(graph, tr, int(s)) / H100.dram_bytes_per_s <= target
    assert cache_aware_bytes_at(graph, tr, int(s) - 1) / H100.dram_bytes_per_s > target
    # a contraction's capacity-forced I/O (Smith et al.): the least S is a whole byte, exactly
    prog = matmul(4096, 4096, 256, DType.BF16)  # memory-bound on an H100
    graph = lift(prog)
    tr = cache_aware_traffic(graph, H100)
    assert (
        tr.contractions
        and cache_aware_bytes_at(graph, tr, int(H100.onchip_bytes)) == tr.cache_aware_bytes
    )
    bw = H100.dram_bytes_per_s
    target = 1.0001 * tr.compulsory_bytes / bw
    p = provision_loaded(load(prog), target, "H100-SXM")
    s = int(p.requirement("on-chip capacity").value)
    assert (
        cache_aware_bytes_at(graph, tr, s) / bw
        <= target
        < cache_aware_bytes_at(graph, tr, s - 1) / bw
    )


def test_launch_floors_and_unfused_frontier() -> None:
    prog = softmax(64, 4096)  # 7 statements without an origin: 7 eager kernels
    a = analyze(prog, H100)
    target = a.unfused.seconds * 1.5
    p = provision_loaded(load(prog), target, "H100-SXM", "fused")
    assert p.requirement("launch floor").value == target
    # unfused: Σ_g max(b_g, L) = target, closed form over the sorted kernel terms
    b = np.array(sorted(max(o.compute_seconds, o.memory_seconds) for o in a.ops))
    L = p.requirement("launch floor (unfused)").value
    assert np.maximum(b, L).sum() == pytest.approx(target, rel=1e-12)
    # every frontier point puts the eager bound exactly on the target
    c = np.array([o.compute_seconds for o in a.ops])
    d = np.array([o.dram_bytes for o in a.ops])
    lf = np.array([o.launch_seconds for o in a.ops])
    D = a.totals.unfused_dram_bytes

    def f(sigma, beta):
        return max(np.maximum(np.maximum(c * sigma, d * beta), lf).sum(), D * beta)

    assert f(1.0, 1 / H100.dram_bytes_per_s) == pytest.approx(a.unfused.seconds, rel=1e-12)
    assert len(p.unfused_frontier) >= 3
    for q in p.unfused_frontier:
        assert f(1 / q.compute_scale, 1 / q.bandwidth_bytes_per_s) == pytest.approx(
            target, rel=1e-9
        )
    bws = [q.bandwidth_bytes_per_s for q in p.unfused_frontier]
    scales = [q.compute_scale for q in p.unfused_frontier]
    assert bws == sorted(bws, reverse=True) and scales == sorted(scales)  # a trade-off
    # the eager bound's least bandwidth alone: re-analysed with it, the unfused bound is the target
    eager_bw = p.requirement("dram bandwidth (unfused)").value
    assert f(1.0, 1 / eager_bw) == pytest.approx(target, rel=1e-12)
    assert analyze(prog, _with_bw(H100, eager_bw)).unfused.seconds == pytest.approx(
        target, rel=1e-12
    )
    corner = p.frontier[0]
    assert corner.compute_scale == a.fused.compute_seconds / target


def test_specs_meeting_the_target() -> None:
    prog = softmax(64, 4096)
    target = analyze(prog, get_spec("H100-SXM")).cache_aware.seconds
    p = provision_loaded(load(prog), target, "L4")
    for s in list_specs():
        bound = analyze(prog, s, Assumptions()).cache_aware.seconds
        verdict = next(v for v in p.specs if v.arch == s.name)
        assert verdict.seconds == bound and verdict.meets == (bound <= target)
    assert {"H100-SXM", "H200-SXM", "B200"} <= {v.arch for v in p.specs if v.meets}
    assert "L4" not in {v.arch for v in p.specs if v.meets}


def test_errors_and_cli(tmp_path, capsys) -> None:
    prog = load(softmax(8, 64))
    with pytest.raises(UsageError, match="unknown level 'unfused'"):
        provision_loaded(prog, 1e-3, level="unfused")
    with pytest.raises(UsageError, match="not a positive time"):
        provision_loaded(prog, -1.0)
    f = tmp_path / "p.ir"
    f.write_text(str(softmax(64, 4096)))
    assert main(["provision", str(f), "--target-ms", "0"]) == 2
    assert "positive, finite number of milliseconds" in capsys.readouterr().err
    assert main(["provision", str(f), "--target-ms", "0.01", "--like", "L4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["like"] == "L4" and data["target_seconds"] == 1e-5
    assert {r["resource"] for r in data["requirements"]} >= {
        "dram bandwidth",
        "SIMT rates",
        "on-chip capacity",
    }
