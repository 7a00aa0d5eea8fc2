"""solar compare / analyze with several GPUs: the table's numbers are the single-GPU analyses'."""

from __future__ import annotations

import json

import pytest

from solar.api import analyze, analyze_archs, load
from solar.cli import main
from solar.errors import UsageError
from solar.hardware import get_spec
from solar.ir.dtypes import DType
from solar.usecases.compare import build_comparison, compare
from tests.backends.test_bounds import matmul
from tests.backends.test_cache_aware import softmax

ARCHS = ["L4", "A100-SXM4-80GB", "H100-SXM"]


@pytest.mark.parametrize(
    "program", [matmul(256, 128, 512, DType.BF16), softmax(64, 4096)], ids=["mm", "softmax"]
)
def test_table_equals_single_arch_analyses(program) -> None:
    c = compare(program, arch=ARCHS)
    assert [r.arch for r in c.rows] == ARCHS and c.reference == "L4"
    first = analyze(program, arch="L4")
    for arch in ARCHS:
        alone = analyze(program, arch=arch)
        row = c.row(arch)
        assert set(row.levels) == set(alone.bounds) == {"fused", "cache_aware", "library", "unfused", "graphed"}
        for level, b in alone.bounds.items():
            cell = row.levels[level]
            assert cell.seconds == b.seconds
            assert cell.bottleneck == b.bottleneck
            assert cell.ratio == b.seconds / first.bounds[level].seconds
    assert c.row("L4").levels["fused"].ratio == 1.0


def test_precision_paths_per_gpu() -> None:
    """fp8 runs on H100's fp8 path and on A100's fp16 path (A100 has none); int4 on the L4's and
    A100's int4 paths and on H100's int8 path; fp32 stays on the FMA pipe under `exact`."""
    lines = {}
    for dtype in (DType.F8E4M3, DType.I4, DType.F32):
        c = compare(matmul(64, 64, 64, dtype), arch=ARCHS)
        lines[dtype] = {r.arch: r.precision for r in c.rows}
    assert lines[DType.F8E4M3]["H100-SXM"] == ["f8e4m3 -> tensor fp8"]
    assert lines[DType.F8E4M3]["A100-SXM4-80GB"] == ["f8e4m3 -> tensor fp16 (no fp8 path)"]
    assert lines[DType.F8E4M3]["L4"] == ["f8e4m3 -> tensor fp8"]
    assert lines[DType.I4]["L4"] == ["i4 -> tensor int4"]
    assert lines[DType.I4]["A100-SXM4-80GB"] == ["i4 -> tensor int4"]
    assert lines[DType.I4]["H100-SXM"] == ["i4 -> tensor int8 (no int4 path)"]
    assert lines[DType.F32]["H100-SXM"] == ["f32 -> fma (exact policy: no TF32 for this op)"]
    c = compare(matmul(64, 64, 64), arch=["H100-SXM"], precision="fastest")
    assert c.rows[0].precision == ["f32 -> tensor fp16"]
    assert c.rows[0].clock == "boost 1980 MHz"
    c = compare(matmul(64, 64, 64), arch=["H100-SXM"], clock_mhz=990)
    assert c.rows[0].clock == "locked 990 MHz (boost 1980)" and c.rows[0].clock_mhz == 990


def test_what_changes_the_binding_is_exact() -> None:
    # memory-bound softmax (16 MiB in; its output fits in L2, write-back): memory / the next term
    c = compare(softmax(1024, 4096), arch=["H100-SXM"])
    cell = c.rows[0].levels["fused"]
    assert cell.bottleneck == "memory"
    nxt = max(cell.compute_seconds, cell.launch_seconds)
    assert c.rows[0].change["fused"] == f"DRAM bandwidth x{cell.memory_seconds / nxt:.3g} -> " + (
        "compute binds" if cell.compute_seconds >= cell.launch_seconds else "launch binds"
    )
    # compute-bound bf16 matmul: the MACs spread over the tensor cores (rate ρ/2 MAC/s) and the
    # FMA pipe (bf16 SIMT rate / 2), so memory binds once n / (ρ/2 + fma) = memory term
    c = compare(matmul(2048, 2048, 2048, DType.BF16), arch=["A100-SXM4-80GB"])
    cell = c.rows[0].levels["fused"]
    assert cell.binds == "compute (tensor bf16)"
    a100 = get_spec("A100-SXM4-80GB")
    fma = max(a100.simt_rate("bf16"), a100.simt_rate("fp32")) / 2
    rho = 2 * (2048**3 / cell.memory_seconds - fma)
    factor = rho / a100.tensor_rate("bf16")
    assert c.rows[0].change["fused"] == f"tensor bf16 x{factor:.3g} -> memory binds"


def _ir_file(tmp_path, program) -> str:
    path = tmp_path / "prog.ir"
    path.write_text(str(program))
    return str(path)


def test_cli_analyze_several_gpus_prints_one_table_and_compare_json(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for every GPU name in one line
    f = _ir_file(tmp_path, softmax(1024, 4096))
    assert main(["analyze", f, "--arch", *ARCHS]) == 0
    out = capsys.readouterr().out
    assert out.count("softmax on 3 GPUs") == 1 and "per op" not in out
    assert all(a in out for a in ARCHS) and "DRAM bandwidth" in out  # (the cell may wrap)
    assert main(["compare", f, "--arch", *ARCHS, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = build_comparison(softmax(1024, 4096), analyze_archs(load(f), ARCHS))
    assert data == json.loads(expected.to_json())
    assert main(["analyze", f, "--arch", "L4"]) == 0  # one GPU: the usual report, no table
    assert "on 1 GPUs" not in capsys.readouterr().out


def test_bad_input_is_one_line(tmp_path, capsys) -> None:
    f = _ir_file(tmp_path, softmax(8, 8))
    assert main(["compare", f, "--arch", "L4", "Z9"]) == 2
    assert "unknown GPU 'Z9'" in capsys.readouterr().err
    assert main(["analyze", f, "--arch", "L4", "H100", "--plot", str(tmp_path / "x.txt")]) == 2
    assert "name a .svg, .png or .pdf file" in capsys.readouterr().err
    with pytest.raises(UsageError, match="no GPU given"):
        compare(softmax(8, 8), arch=[])


def test_python_api() -> None:
    import solar

    c = solar.compare(softmax(8, 64), arch=["L4", "B200"])
    assert [r.arch for r in c.rows] == ["L4", "B200"] and c.row("B200").levels[
        "fused"
    ].binds == "launch"  # tiny: the launch floor binds everywhere
    assert c.row("B200").levels["fused"].ratio == 1.0
    p = solar.provision(softmax(8, 64), target_ms=0.001, like="L4")
    assert p.like == "L4" and p.target_seconds == 1e-6
    assert p.requirement("dram bandwidth").value == pytest.approx(c.dram_bytes / 1e-6, rel=1e-15)
