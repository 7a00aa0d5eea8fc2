"""Every "what to fix first" saving is at most the gap between the levels it names, and the
device-side savings listed together never add to more than unfused − fused (plus eager@host −
unfused where that level exists), over the examples and a sample of the suite, on two GPUs at both
precisions (docs/BOUNDS.md §16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar.api import analyze_loaded, load

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "benchmarks" / "suite"
FILES = sorted((ROOT / "examples").glob("*.py")) + [
    SUITE / name
    for name in (
        "level1/11_ReLU.py", "level1/13_Softmax.py", "level1/15_LayerNorm.py", "level1/19_MaxPool2d_ceil_mode.py",
        "level1/10_Conv2d_grouped_dilated.py", "level1/16_Sum_reduction_over_dim.py",
        "level2/1_Linear_ReLU_BiasAdd.py", "level2/3_Matmul_Softmax.py", "level2/4_Linear_GELU_LayerNorm.py",
        "level2/7_Conv2d_BatchNorm_ReLU_MaxPool.py", "level2/8_Conv2d_GroupNorm_Mish.py",
        "level2/10_Conv3d_MaxPool3d_LogSumExp_ReLU.py", "level2/12_Linear_Dropout_GELU_LayerNorm.py",
        "level2/51_Gather_logits_LogSoftmax.py", "level2/52_QKV_projection_causal_SDPA.py",
        "level3/1_MLP_3_layers.py", "level3/3_Transformer_encoder_block.py", "level3/4_LeNet_strided.py",
        "level3/5_ResNet_basic_blocks.py", "level3/7_MobileNet_depthwise_separable_hardswish.py",
    )
]
ARCHS = ("H100-SXM", "L4", "H200-SXM")  # H200-SXM is calibrated: it has the eager@host level
REL = 1e-12

# the levels whose gap bounds each kind of opportunity: (lower, upper)
NAMED = {
    "fusion op": ("library", "unfused"),
    "fusion kernel": ("cache_aware", "library"),
    "cache": ("fused", "cache_aware"),
    "launch": ("cache_aware", "unfused"),
    "dispatch": ("unfused", "eager_host"),
}
DEVICE = {"fusion", "cache", "launch", "dispatch"}


def _kind(o) -> str:
    if o.kind == "fusion":
        return "fusion kernel" if o.what.startswith("fuse across the library kernel") else "fusion op"
    return o.kind


def _seconds(report, level: str) -> float:
    """A level's time; an absent one takes the level below it (the report's order)."""
    order = ("fused", "cache_aware", "library", "unfused", "eager_host")
    for lv in reversed(order[: order.index(level) + 1]):
        if lv in report.bounds:
            return report.bounds[lv].seconds
    raise AssertionError(level)


def _check(report, fastest=None) -> None:
    device = 0.0
    for o in report.insights.opportunities:
        where = f"{report.program} on {report.arch}: {o.kind} {o.what} {o.seconds}"
        if _kind(o) in NAMED:
            lo, hi = NAMED[_kind(o)]
            assert (getattr(o, "lo", lo), getattr(o, "hi", hi)) == (lo, hi) or lo not in report.bounds, where
            assert o.seconds <= (_seconds(report, hi) - _seconds(report, lo)) * (1 + REL), where
        if o.kind in DEVICE:
            device += o.seconds
    b = report.bounds
    total = max(b["unfused"].seconds, b["eager_host"].seconds if "eager_host" in b else 0.0) - b["fused"].seconds
    assert device <= total * (1 + REL) + 1e-18, f"{report.program} on {report.arch}: {device} > {total}"
    if fastest is not None:
        # precision: each op's own kernel, exact -> fastest; together at most what the ops lose
        lose = sum(max(0.0, e.seconds - f.seconds) for e, f in zip(report.ops, fastest.ops))
        won = sum(o.seconds for o in report.insights.opportunities if o.kind == "precision")
        assert won <= lose * (1 + REL) + 1e-18, f"{report.program} on {report.arch}: precision {won} > {lose}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_savings_within_their_gaps(path):
    loaded = load(str(path))
    for arch in ARCHS:
        exact = analyze_loaded(loaded, arch, precision="exact")
        fastest = analyze_loaded(loaded, arch, precision="fastest")
        _check(exact, fastest)
        _check(fastest)


def test_layernorm_softmax_fusion_is_the_gap():
    """Two memory-bound ops whose fusion is the whole program: each op's win is its unfused time less
    the compulsory bytes only it moves (LayerNorm reads x and its weights, softmax writes the
    output beyond the write-back L2), and the two add to exactly unfused − fused."""
    r = analyze_loaded(load(str(ROOT / "examples" / "layernorm_softmax.py")), "H100-SXM")
    x = 32 * 512 * 2048 * 4
    assert r.insights.op_floor_bytes == [x + 2 * 2048 * 4, r.totals.dram_bytes - x - 2 * 2048 * 4]
    bw = r.totals.dram_bytes / r.bounds["fused"].memory_seconds
    fusions = [o for o in r.insights.opportunities if o.kind == "fusion"]
    assert [o.seconds for o in fusions] == pytest.approx(
        [op.seconds - floor / bw for op, floor in zip(r.ops, r.insights.op_floor_bytes)], rel=REL
    )
    assert [o.together for o in fusions] == [0.0, 0.0]
    gap = r.bounds["unfused"].seconds - r.bounds["fused"].seconds
    assert sum(o.seconds for o in fusions) == pytest.approx(gap, rel=1e-9)
