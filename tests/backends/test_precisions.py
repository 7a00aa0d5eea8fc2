"""Every precision priced per op (the tensor-core path of the operand dtype, beside the FMA pipe) and
per tensor (its own width, block scales included), on hand-built GEMMs."""

from __future__ import annotations

import math

import pytest

from solar.backends import Assumptions, analyze
from solar.hardware import get_spec
from solar.ir.affine import var
from solar.ir.dtypes import BLOCK_SCALES, DType
from solar.ir.nodes import Call, Const, Load, Loop, Origin, Program, Role, Stmt, Store, TensorDecl
from solar.ir.scalar_ops import ScalarOp, Update

i, j, k = var("i"), var("j"), var("k")
D = DType

NW = Assumptions(writeback=False)  # byte rules with every output byte in DRAM at the end (write-back: test_library.py)


def gemm(m: int, n: int, kk: int, dtype: DType, out: DType, tf32: bool = False) -> Program:
    o = Origin("mm", 0, "", allow_tf32=tf32)
    return Program(
        "gemm",
        (
            TensorDecl("A", (m, kk), dtype, Role.INPUT),
            TensorDecl("B", (kk, n), dtype, Role.PARAM),
            TensorDecl("C", (m, n), out, Role.OUTPUT),
        ),
        (
            Stmt(
                (Loop("i", m), Loop("j", n)), Store("C", (i, j)), Update.ASSIGN, Const(0), origin=o
            ),
            Stmt(
                (Loop("i", m), Loop("j", n), Loop("k", kk)),
                Store("C", (i, j)),
                Update.ADD,
                Call(ScalarOp.MUL, (Load("A", (i, k)), Load("B", (k, j)))),
                origin=o,
            ),
        ),
    )


# (gpu, operand dtype, output dtype, TF32 allowed, policy, tensor path, SIMT key, MACs per slot):
# the MAC rate is tensor_rate(path)/2 + simt_rate(key)/2 * per_slot (units run concurrently).
CASES = [
    ("L4", D.I8, D.I32, False, "exact", "int8", "fp32", 4),
    ("L4", D.I4, D.I32, False, "exact", "int4", "fp32", 4),
    ("A100-SXM4-80GB", D.I4, D.I32, False, "exact", "int4", "fp32", 4),
    ("A100-SXM4-80GB", D.I8, D.I32, False, "exact", "int8", "fp32", 4),
    ("H100-SXM", D.F8E4M3, D.BF16, False, "exact", "fp8", "fp32", 1),
    ("H100-SXM", D.F8E5M2, D.BF16, False, "exact", "fp8", "fp32", 1),
    ("H100-SXM", D.MXF8E4M3, D.BF16, False, "exact", "fp8", "fp32", 1),
    ("A100-SXM4-80GB", D.F8E4M3, D.BF16, False, "exact", "fp16", "fp32", 1),  # no fp8 path
    ("B200", D.FP4, D.BF16, False, "exact", "fp4", "fp32", 1),
    ("B200", D.NVFP4, D.BF16, False, "exact", "fp4", "fp32", 1),
    ("B200", D.MXFP4, D.BF16, False, "exact", "fp4", "fp32", 1),
    ("H200-SXM", D.NVFP4, D.BF16, False, "exact", "fp8", "fp32", 1),  # fp4 values are fp8 values
    ("H100-SXM", D.BF16, D.BF16, False, "exact", "bf16", "bf16", 1),
    ("H100-SXM", D.F16, D.F16, False, "exact", "fp16", "fp16", 1),
    ("A100-SXM4-80GB", D.F64, D.F64, False, "exact", "fp64", "fp64", 1),
    ("H100-SXM", D.F32, D.F32, True, "exact", "tf32", "fp32", 1),
    ("H100-SXM", D.F32, D.F32, False, "fastest", "fp16", "fp32", 1),
    ("L4", D.F32, D.F32, False, "fastest", "fp16", "fp32", 1),
]


@pytest.mark.parametrize(
    ("gpu", "dtype", "out", "tf32", "policy", "path", "simt", "per_slot"),
    CASES,
    ids=[f"{c[0]}-{c[1].text}-{c[4]}" for c in CASES],
)
def test_gemm_priced_at_its_tensor_core_path(gpu, dtype, out, tf32, policy, path, simt, per_slot):
    spec = get_spec(gpu)
    M, N, K = 4096, 2048, 8192
    a = analyze(gemm(M, N, K, dtype, out, tf32), spec, Assumptions(writeback=False, precision=policy))
    rate = spec.tensor_rate(path) / 2 + spec.simt_rate(simt) / 2 * per_slot
    assert math.isclose(a.fused.compute_seconds, M * N * K / rate, rel_tol=1e-12)
    assert a.fused.binding_unit == "tensor"


@pytest.mark.parametrize(("gpu", "dtype", "simt"), [("L4", D.F64, "fp64"), ("L4", D.F32, "fp32")])
def test_no_tensor_path_runs_on_the_fma_pipe(gpu, dtype, simt):
    spec = get_spec(gpu)
    M = N = K = 1024
    a = analyze(gemm(M, N, K, dtype, dtype), spec, NW)
    assert math.isclose(
        a.fused.compute_seconds, M * N * K / (spec.simt_rate(simt) / 2), rel_tol=1e-12
    )
    assert a.fused.binding_unit == "fma"


def test_int4_without_a_tensor_path_uses_int8_on_hopper():
    spec = get_spec("H100-SXM")
    assert spec.tensor_rate("int4") is None
    a = analyze(gemm(2048, 2048, 2048, D.I4, D.I32), spec, NW)
    rate = spec.tensor_rate("int8") / 2 + spec.simt_rate("fp32") / 2 * 4
    assert math.isclose(a.fused.compute_seconds, 2048**3 / rate, rel_tol=1e-12)


def test_clock_scales_tensor_and_simt_rates_not_dram():
    spec = get_spec("L4")
    prog = gemm(4096, 4096, 4096, D.I8, D.I32)
    full = analyze(prog, spec, NW)
    locked = analyze(prog, spec, Assumptions(writeback=False, clock_mhz=spec.boost_clock_mhz.value / 4))
    assert math.isclose(locked.fused.compute_seconds, 4 * full.fused.compute_seconds, rel_tol=1e-12)
    assert locked.fused.memory_seconds == full.fused.memory_seconds
    assert locked.cache_aware.memory_seconds == full.cache_aware.memory_seconds


# ---- bytes per tensor: element width plus block scales -------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "element_bits", "block", "scale_bits"),
    [(D.MXF8E4M3, 8, 32, 8), (D.MXF8E5M2, 8, 32, 8), (D.MXFP4, 4, 32, 8), (D.NVFP4, 4, 16, 8)],
)
def test_block_scaled_tensors_count_their_scales(dtype, element_bits, block, scale_bits):
    assert (dtype.bits, BLOCK_SCALES[dtype].block, BLOCK_SCALES[dtype].scale_bits) == (
        element_bits,
        block,
        scale_bits,
    )
    M, N, K = 256, 128, 512
    a = analyze(gemm(M, N, K, dtype, D.BF16), get_spec("B200"), NW)

    def nbytes(elements: int) -> float:
        return elements * element_bits / 8 + -(-elements // block) * scale_bits / 8

    assert a.totals.dram_bytes == nbytes(M * K) + nbytes(K * N) + 2 * M * N


def test_storage_bytes_rounds_scales_up_and_plain_types_have_none():
    assert D.MXFP4.storage_bytes(33) == 33 / 2 + 2  # two blocks of 32 hold 33 elements
    assert D.NVFP4.storage_bytes(16) == 8 + 1
    assert D.NVFP4.storage_bytes(0) == 0
    for plain in (D.F32, D.BF16, D.F8E4M3, D.FP4, D.I4):
        assert plain.block_scale is None
        assert plain.storage_bytes(33) == 33 * plain.bits / 8
    assert set(BLOCK_SCALES) == {D.MXF8E4M3, D.MXF8E5M2, D.MXFP4, D.NVFP4}


@pytest.mark.parametrize("dtype", [D.F64, D.F32, D.F16, D.BF16, D.F8E4M3, D.I8, D.I4, D.FP4])
def test_plain_tensor_bytes_are_width_times_elements(dtype):
    M, N, K = 64, 32, 128
    a = analyze(gemm(M, N, K, dtype, D.F32), get_spec("H100-SXM"), NW)
    assert a.totals.dram_bytes == (M * K + K * N) * dtype.bits / 8 + 4 * M * N
