"""Everything of `solar validate` / `solar calibrate` that needs no GPU: spec detection from device
properties, violation logic and result assembly with recorded timings, the no-CUDA error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import solar
from solar.errors import SpecError
from solar.validate.device import DeviceInfo, detect_spec
from solar.backends.levels import violations as find
from solar.validate.run import ModeTiming, assemble
from solar.validate.timing import summarise

ROOT = Path(__file__).resolve().parents[2]
MIB = 2**20


@pytest.mark.parametrize(
    "info,expected",
    [
        (DeviceInfo("NVIDIA H200", 132, 60 * MIB, 141 * 10**9, "9.0"), "H200-SXM"),
        (DeviceInfo("NVIDIA H100 80GB HBM3", 132, 50 * MIB, 80 * 10**9, "9.0"), "H100-SXM"),
        (DeviceInfo("NVIDIA L4", 58, 48 * MIB, 24 * 10**9, "8.9"), "L4"),
        (DeviceInfo("NVIDIA B200", 148, 126 * MIB, 180 * 10**9, "10.0"), "B200"),
    ],
)
def test_spec_detected_from_device_properties(info, expected):
    assert detect_spec(info).name == expected


def test_unknown_device_with_unique_shape_is_detected_by_sm_count():
    assert detect_spec(DeviceInfo("Some OEM L4 board", 58, 48 * MIB, 24 * 10**9, "8.9")).name == "L4"


def test_ambiguous_device_asks_for_arch():
    # A100 SXM and PCIe share 108 SMs and cc 8.0: the name must decide, or --arch.
    with pytest.raises(SpecError, match="pass --arch"):
        detect_spec(DeviceInfo("NVIDIA A100 (unknown board)", 108, 40 * MIB, 40 * 10**9, "8.0"))


def test_unknown_device_asks_for_arch():
    with pytest.raises(SpecError, match="cannot tell which spec.*pass --arch"):
        detect_spec(DeviceInfo("NVIDIA RTX 4090", 128, 72 * MIB, 24 * 10**9, "8.9"))


def _t(median: float, minimum: float) -> ModeTiming:
    return ModeTiming(median_seconds=median, min_seconds=minimum, reps=10)


def _fastest(measured: dict[str, ModeTiming]) -> dict[str, float]:
    return {mode: t.min_seconds for mode, t in measured.items()}


def test_violation_when_fastest_run_beats_a_bound_for_its_mode():
    bounds = {"fused": 10e-6, "unfused": 30e-6}
    measured = {"eager": _t(40e-6, 25e-6), "compile": _t(20e-6, 15e-6)}
    violations = find(bounds, _fastest(measured))
    # eager beat the unfused bound (25 < 30); compile is never checked against unfused.
    assert [(v.execution, v.level) for v in violations] == [("eager", "unfused")]
    assert "below the unfused bound" in violations[0].describe()


def test_no_violation_at_or_above_every_bound():
    bounds = {"fused": 10e-6, "unfused": 30e-6, "cache_aware": 12e-6}
    measured = {"eager": _t(40e-6, 30e-6), "compile": _t(20e-6, 12e-6)}
    assert find(bounds, _fastest(measured)) == []


def test_compile_beating_fused_is_a_violation():
    violations = find({"fused": 10e-6, "unfused": 50e-6}, _fastest({"compile": _t(9e-6, 8e-6)}))
    assert [(v.execution, v.level) for v in violations] == [("compile", "fused")]


def test_result_assembly_from_a_real_report_and_recorded_timings():
    report = solar.analyze(str(ROOT / "examples/matmul.py"), arch="H200-SXM")
    fused = report.bounds["fused"].seconds
    measured = {"eager": _t(2.0 * fused, 1.9 * fused)}
    result = assemble("matmul.py", report, measured, {"gpu": "NVIDIA H200", "driver_version": "580"})
    assert result.arch == "H200-SXM"
    assert result.headroom["eager"] == pytest.approx(2.0)
    assert result.violations == []
    assert set(result.bounds) >= {"fused", "unfused"}
    assert '"violations":[]' in result.to_json()


def test_timing_summary():
    t = summarise([3.0, 1.0, 2.0, 5.0])
    assert (t.median_seconds, t.min_seconds, t.reps) == (2.5, 1.0, 4)


@pytest.mark.parametrize("command", [["validate", "examples/mlp.py"], ["calibrate"]])
def test_without_cuda_one_line_error(command):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    proc = subprocess.run([sys.executable, "-m", "solar.cli", *command], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no CUDA GPU" in proc.stderr


@pytest.mark.gpu
def test_validate_matmul_on_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from solar.validate.run import validate_file

    result = validate_file(ROOT / "examples/matmul.py", reps=5)
    assert result.violations == []


# Measured ceilings (solar calibrate on a real H200) against the peaks the bounds use: a measurement
# above a peak would mean the bound could be beaten.
CEILINGS = {
    "dram_copy_bytes_per_s": lambda s: s.dram_bytes_per_s,
    "gemm_fp32_flops_per_s": lambda s: s.simt_rate("fp32"),
    "gemm_tf32_flops_per_s": lambda s: s.tensor_rate("tf32"),
    "gemm_fp16_flops_per_s": lambda s: s.tensor_rate("fp16"),
    "gemm_bf16_flops_per_s": lambda s: s.tensor_rate("bf16"),
    "gemm_fp8_flops_per_s": lambda s: s.tensor_rate("fp8"),
    "gemm_int8_flops_per_s": lambda s: s.tensor_rate("int8"),
}


def test_calibrated_h200_spec_matches_datasheet_and_stays_below_its_peaks():
    from solar.hardware import get_spec

    calibrated = get_spec(str(ROOT / "hardware_specs/calibrated/H200-SXM.yaml"))
    datasheet = get_spec("H200-SXM")
    assert calibrated.model_dump(exclude={"calibrated", "device_floors"}) == datasheet.model_dump(exclude={"calibrated", "device_floors"})
    for key, peak in CEILINGS.items():
        measured = calibrated.calibrated[key]
        assert measured.source.startswith("measured 2026-11-30")
        assert measured.value < peak(datasheet), key
    assert calibrated.calibrated["min_kernel_seconds"].value > datasheet.min_kernel_seconds.value
