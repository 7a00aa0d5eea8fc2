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
    bounds = {"fused": NS(seconds=10 * US), "unfused": NS(seconds=20 * US), "eager_host": NS(seconds=25 * US)}
    return NS(library_kernels=kernels, ops=ops, bounds=bounds, traffic=None)


def test_opportunities_rank_fusion_precision_launch_dispatch():
    out = opportunities(_report(), fastest_op_compute=(1 * US, 2 * US, 1 * US, 0.5 * US))
    rows = [(o.kind, o.what, o.detail) for o in out]
    assert rows == [
        ("fusion", "fuse across the library kernel mm + add [fc]", "100 B in, 50 B out of DRAM at its boundary (m.py:3)"),
        ("dispatch", "host dispatch binds eager execution: CUDA graphs or torch.compile", ""),
        ("precision", "run mm at the fastest precision (it runs on fp32 now)", "m.py:mm"),
        ("fusion", "fuse relu [act] into its neighbours", "unfused 3.00 µs, compute 1.00 µs (m.py:relu)"),
        ("fusion", "fuse tanh into its neighbours", "unfused 2.00 µs, compute 0.50 µs (m.py:tanh)"),
        ("launch", "1 kernels are bound by the launch floor: fuse them", "each kernel takes at least the spec's minimum kernel time"),
    ]
    assert [o.seconds for o in out] == pytest.approx([5 * US, 5 * US, 4 * US, 2 * US, 1.5 * US, 1.5 * US], rel=1e-12)
