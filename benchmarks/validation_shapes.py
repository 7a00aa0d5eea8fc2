"""GEMM, convolution and attention cases for validating solar's bounds on a real GPU: each case is an
in-memory module plus input specs, across fp32 (TF32 off and on), fp16, bf16 and fp8."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class Case:
    name: str
    category: str  # gemm | conv | attention
    dtype: str  # fp32 | tf32 | fp16 | bf16 | fp8
    build: Callable[[], tuple[nn.Module, list[torch.Tensor]]]  # called under torch.device("cuda") or fake mode
    tf32: bool = False  # set torch.backends.cuda.matmul.allow_tf32 / cudnn.allow_tf32 for this case


TORCH_DTYPE = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b


class ScaledMM(nn.Module):
    """fp8 e4m3 GEMM with per-tensor scales, bf16 output; the second operand column-major."""

    def __init__(self, n: int, k: int):
        super().__init__()
        self.register_buffer("scale_a", torch.tensor(1.0))
        self.register_buffer("scale_b", torch.tensor(1.0))

    def forward(self, a, bt):
        return torch._scaled_mm(a, bt.t(), scale_a=self.scale_a, scale_b=self.scale_b, out_dtype=torch.bfloat16)


class Attention(nn.Module):
    def forward(self, q, k, v):
        s = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        return F.softmax(s, dim=-1) @ v


def _gemm(m: int, n: int, k: int, dtype: str) -> Case:
    def build():
        if dtype == "fp8":
            a = torch.randn(m, k).to(torch.float8_e4m3fn)
            bt = torch.randn(n, k).to(torch.float8_e4m3fn)
            return ScaledMM(n, k), [a, bt]
        t = TORCH_DTYPE[dtype]
        return MatMul(), [torch.randn(m, k, dtype=t), torch.randn(k, n, dtype=t)]

    return Case(f"gemm_{m}x{n}x{k}_{dtype}", "gemm", dtype, build, tf32=dtype == "tf32")


def _conv(n: int, c: int, hw: int, o: int, k: int, stride: int, groups: int, dtype: str) -> Case:
    def build():
        t = TORCH_DTYPE[dtype]
        conv = nn.Conv2d(c, o, k, stride=stride, padding=k // 2, groups=groups, bias=False, dtype=t)
        return conv, [torch.randn(n, c, hw, hw, dtype=t)]

    name = f"conv_n{n}_c{c}_{hw}x{hw}_o{o}_k{k}_s{stride}_g{groups}_{dtype}"
    # fp32 convolutions run with PyTorch's default cudnn.allow_tf32=True; the case records that.
    return Case(name, "conv", dtype, build, tf32=dtype == "tf32")


def _attention(b: int, h: int, s: int, d: int, dtype: str) -> Case:
    def build():
        t = TORCH_DTYPE[dtype]
        return Attention(), [torch.randn(b, h, s, d, dtype=t) for _ in range(3)]

    return Case(f"attention_b{b}_h{h}_s{s}_d{d}_{dtype}", "attention", dtype, build)


GEMM_SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192), (16, 4096, 4096), (4096, 4096, 256), (256, 256, 16384)]
CASES: list[Case] = (
    [_gemm(m, n, k, dt) for dt in ("fp32", "tf32", "fp16", "bf16", "fp8") for m, n, k in GEMM_SHAPES]
    + [
        _conv(n, c, hw, o, k, s, g, dt)
        for dt in ("fp32", "fp16", "bf16")
        for n, c, hw, o, k, s, g in ((32, 64, 56, 64, 3, 1, 1), (32, 3, 224, 64, 7, 2, 1), (32, 128, 56, 128, 3, 1, 128))
    ]
    + [_attention(b, h, s, d, dt) for dt in ("fp16", "bf16") for b, h, s, d in ((8, 16, 1024, 64), (4, 16, 2048, 128))]
)
