"""Cases for solar/frontends/torch/lowerings/scaled.py (fp8 GEMM with per-tensor and row-wise
scales; PyTorch runs _scaled_mm on the CPU too)."""

from __future__ import annotations

import torch

from tests.frontends.lowering_cases import T

aten = torch.ops.aten
E4M3 = torch.float8_e4m3fn



CASES = {
    aten._scaled_mm.default: [
        ((T((16, 32), E4M3), T((32, 8), E4M3, transpose=True), T((), torch.float32, positive=True), T((), torch.float32, positive=True)), {"out_dtype": torch.float32}),
        ((T((16, 32), E4M3), T((32, 8), E4M3, transpose=True), T((16, 1), torch.float32, positive=True), T((1, 8), torch.float32, positive=True), T((8,), torch.bfloat16)), {"out_dtype": torch.bfloat16}),
    ],
}
