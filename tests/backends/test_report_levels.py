"""The report carries all three bound levels and the traffic per level (no torch needed)."""

from __future__ import annotations

import json

from solar.backends import analyze_graph
from solar.hardware import get_spec
from solar.ir.dtypes import DType
from solar.lift import lift
from solar.report import build_report, reports_to_json
from tests.backends.test_cache_aware import gemm, normalize

H200 = get_spec("H200-SXM")


def test_report_has_four_levels_and_traffic() -> None:
    n = 1 << 30
    graph = lift(normalize(n))
    analysis = analyze_graph(graph, H200)
    report = build_report("normalize", analysis, graph)
    assert list(report.bounds) == ["fused", "cache_aware", "library", "unfused"]
    assert report.sol_seconds == report.bounds["fused"].seconds
    data = json.loads(reports_to_json([report]))
    S, L = H200.onchip_bytes, H200.l2_bytes  # the output's last L bytes may stay in L2 (write-back)
    assert data["bounds"]["cache_aware"]["seconds"] == (3 * 4 * n - S - L) / H200.dram_bytes_per_s
    tr = data["traffic"]
    assert tr["compulsory_bytes"] == 8 * n - L
    assert tr["dependency_forced_bytes"] == 4 * n - S
    assert tr["capacity_forced_bytes"] == 0
    assert tr["cache_aware_bytes"] == data["totals"]["cache_aware_dram_bytes"] == 12 * n - S - L
    # no contraction: the library level is the cache-aware bound; the gaps rank the levels
    assert data["bounds"]["library"] == data["bounds"]["cache_aware"] and data["library_kernels"] == []
    assert [(g["lo"], g["hi"]) for g in data["insights"]["gaps"]] == [
        ("fused", "cache_aware"), ("cache_aware", "library"), ("library", "unfused")
    ]
    assert tr["onchip_bytes"] == S
    (forced,) = tr["forced"]
    assert forced["kind"] == "dependency" and forced["tensors"] == ["x", "s"]
    assert forced["bytes"] == 4 * n - S
    assert f"dependency-forced +{(4 * n - S) / 1e9:.3f} GB" in report.traffic.summary()
    assert any(
        line.startswith(f"cache-aware: at most S = {S:.0f} bytes") for line in report.assumptions
    )


def test_report_lists_contraction_patterns() -> None:
    graph = lift(gemm(1 << 15, 1 << 15, 1 << 15, DType.I8, DType.I32))
    report = build_report("gemm", analyze_graph(graph, get_spec("L4")), graph)
    (forced,) = report.traffic.forced
    assert forced.kind == "capacity" and forced.tensors == ["A", "B", "C"]
    assert "m=32768, n=32768, k=32768" in forced.detail
    assert report.traffic.capacity_forced_bytes > 0
    assert report.bounds["cache_aware"].memory_seconds > report.bounds["fused"].memory_seconds
