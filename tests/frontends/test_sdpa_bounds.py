"""bf16 scaled-dot-product attention on an H200: solar's bounds must stay below the fastest times
measured on an H200 (torch 2.11, CUDA 13). Both products (Q·Kᵀ and P·V) use the bf16 tensor cores, as FlashAttention
and cuDNN do; pricing P·V as an fp32 contraction on the FMA pipes would put the bound 4.7x above the
measured time (docs/BOUNDS.md §2)."""

from __future__ import annotations

import pytest

import solar
from solar.hardware import get_spec

MODEL = """
import torch
import torch.nn.functional as F

class Model(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal={causal})

def get_inputs():
    return [torch.randn({shape}, dtype=torch.bfloat16) for _ in range(3)]

def get_init_inputs():
    return []
"""

# (B, H, S, D), causal, measured minimum on an H200 (seconds)
MEASURED = [
    ((1, 32, 4096, 128), False, 0.446e-3),
    ((1, 32, 4096, 128), True, 0.285e-3),
    ((1, 32, 2048, 128), False, 0.123e-3),
    ((8, 16, 1024, 64), False, 0.097e-3),
]


@pytest.mark.parametrize("shape,causal,measured", MEASURED, ids=str)
def test_bf16_sdpa_bounds_below_measured_h200(tmp_path, shape, causal, measured):
    path = tmp_path / "sdpa.py"
    path.write_text(MODEL.format(causal=causal, shape=shape))
    report = solar.analyze(str(path), arch="H200-SXM")
    for level, bound in report.bounds.items():
        assert bound.seconds < measured, (level, bound.seconds, measured)
    assert report.bounds["fused"].binding_unit == "tensor"
    (op,) = report.ops
    assert op.binds == "tensor bf16"
    b, h, s, d = shape
    q = b * h * s * d * 2  # bf16
    l2 = get_spec("H200-SXM").l2_bytes  # the output's bytes within L2 may stay there (write-back)
    assert op.dram_bytes == 3 * q + max(0, q - l2)  # q, k, v read; the output written
