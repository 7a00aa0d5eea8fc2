"""solar.report.insight.opportunities on a hand-made report: the fusion rows of library kernels and of
unfused non-contraction ops (exact seconds, wording and order), the precision, launch and
dispatch rows, and what is left out (no win, a contraction)."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from solar.report.insight import opportunities

US = 1e-6


def _op(op, seconds, compute, memory, contractions=0, bottleneck="memory", module=""):
    return NS(op=op, seconds=seconds, compute_seconds=compute, memory_seconds=memory, contractions=contractions,
              bottleneck=bottleneck, module=module, source=f"m.py:{op}", binds="fp32")


def _report():
    kernels = [
        NS(ops=("mm", "add"), module="fc", seconds=9 * US, compute_seconds=4 * US, in_bytes=100.0, out_bytes=50.0,
           source="m.py:3"),
        NS(ops=("bmm",), module="", seconds=2 * US, compute_seconds=2 * US, in_bytes=1.0, out_bytes=1.0, source="m.py:4"),
    ]
    ops = [
        _op("relu", 3 * US, 1 * US, 2 * US, module="act"),
        _op("mm", 8 * US, 6 * US, 1 * US, contractions=1, bottleneck="compute"),  # no fusion row
        _op("exp", 1 * US, 1 * US, 0.5 * US),  # no win
        _op("tanh", 2 * US, 0.5 * US, 0.5 * US, bottleneck="launch"),
    ]
    bounds = {
        "fused": NS(seconds=10 * US), "cache_aware": NS(seconds=11 * US), "library": NS(seconds=14 * US),
        "unfused": NS(seconds=20 * US), "eager_host": NS(seconds=25 * US),
    }
    return NS(library_kernels=kernels, ops=ops, bounds=bounds, traffic=None)


def test_opportunities_rank_fusion_precision_launch_dispatch():
    """Each row within the gap it names: the library kernel's 5 µs over its compute is cut to the
    library − cache-aware gap (3 µs, which it then takes whole: it overlaps nothing else listed)."""
    out = opportunities(_report(), fastest_op_compute=(1 * US, 2 * US, 1 * US, 0.5 * US))
    rows = [(o.kind, o.what, o.detail, o.lo, o.hi, o.together) for o in out]
    assert rows == [
        ("dispatch", "host dispatch binds eager execution: CUDA graphs or torch.compile", "", "unfused", "eager_host", 0.0),
        ("precision", "run mm at the fastest precision (it runs on fp32 now)", "m.py:mm", "", "", 0.0),
        ("fusion", "fuse across the library kernel mm + add [fc]", "100 B in, 50 B out of DRAM at its boundary (m.py:3)",
         "cache_aware", "library", pytest.approx(3 * US, rel=1e-12)),
        ("fusion", "fuse relu [act] into its neighbours", "unfused 3.00 µs, compute 1.00 µs (m.py:relu)", "library", "unfused", 0.0),
        ("fusion", "fuse tanh into its neighbours", "unfused 2.00 µs, compute 0.50 µs (m.py:tanh)", "library", "unfused", 0.0),
        ("launch", "1 kernels are bound by the launch floor: fuse them", "each kernel takes at least the spec's minimum kernel time",
         "cache_aware", "unfused", 0.0),
        ("cache", "keep more of the working set on chip (finite on-chip storage forces traffic)", "", "fused", "cache_aware", 0.0),
    ]
    assert [o.seconds for o in out] == pytest.approx([5 * US, 4 * US, 3 * US, 2 * US, 1.5 * US, 1.5 * US, 1 * US], rel=1e-12)


def test_overlapping_fusions_together_at_most_their_gap():
    """Three ops whose times over their compute (4, 3, 2 µs) add to more than library → unfused
    (6 µs): largest first, each takes what is left; the one cut says the gap's total; the one left
    with nothing is not listed."""
    ops = [_op("a", 5 * US, 1 * US, 5 * US), _op("b", 4 * US, 1 * US, 4 * US), _op("c", 3 * US, 1 * US, 3 * US)]
    bounds = {"fused": NS(seconds=6 * US), "cache_aware": NS(seconds=6 * US), "library": NS(seconds=6 * US),
              "unfused": NS(seconds=12 * US)}
    out = opportunities(NS(library_kernels=[], ops=ops, bounds=bounds, traffic=None))
    assert [(o.what, o.together) for o in out] == [
        ("fuse a into its neighbours", 0.0), ("fuse b into its neighbours", pytest.approx(6 * US, rel=1e-12)),
    ]
    assert [o.seconds for o in out] == pytest.approx([4 * US, 2 * US], rel=1e-12)


def test_the_same_fix_at_one_place_is_one_item_with_its_count():
    """A loop's body, traced once per iteration: the same op at the same line twice is one item
    (its wins summed, count 2); the same op at another line is its own item; each names its line."""
    elsewhere = _op("relu", 3 * US, 1 * US, 2 * US)
    elsewhere.source = "n.py:9: y = relu(x)"
    ops = [
        _op("relu", 3 * US, 1 * US, 2 * US), _op("relu", 3 * US, 1 * US, 2 * US), elsewhere,
        _op("mm", 8 * US, 6 * US, 1 * US, contractions=1, bottleneck="compute"),
        _op("mm", 8 * US, 6 * US, 1 * US, contractions=1, bottleneck="compute"),
    ]
    bounds = {"fused": NS(seconds=6 * US), "cache_aware": NS(seconds=6 * US), "library": NS(seconds=6 * US),
              "unfused": NS(seconds=30 * US)}
    out = opportunities(NS(library_kernels=[], ops=ops, bounds=bounds, traffic=None),
                        fastest_op_compute=(0.0, 0.0, 0.0, 2 * US, 2 * US))
    assert [(o.kind, o.what, o.where, o.count) for o in out] == [
        ("precision", "run mm at the fastest precision (it runs on fp32 now)", "m.py:mm", 2),
        ("fusion", "fuse relu into its neighbours", "m.py:relu", 2),
        ("fusion", "fuse relu into its neighbours", "n.py:9", 1),
    ]
    assert [o.seconds for o in out] == pytest.approx([8 * US, 4 * US, 2 * US], rel=1e-12)
