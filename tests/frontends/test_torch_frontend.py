"""End-to-end PyTorch frontend tests: tracing on fake tensors, exact counts, output comparison of
whole programs, and the error paths a user meets."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import solar
from solar.errors import ModelFileError, SpecError, UnsupportedOpError
from solar.frontends.torch.check import check_module

ROOT = Path(__file__).resolve().parents[2]


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


MATMUL_FORMS = [
    ((7,), (7,)),
    ((5, 7), (7,)),
    ((7,), (7, 3)),
    ((4, 5, 7), (7, 3)),
    ((2, 4, 5, 7), (4, 7, 3)),
    ((2, 1, 5, 7), (3, 7, 2)),
    ((4, 5, 7), (4, 7, 3)),
    ((7,), (2, 7, 3)),
]


@pytest.mark.parametrize("a,b", MATMUL_FORMS)
def test_matmul_broadcasting_forms_match_torch(a, b):
    model = Fn(torch.matmul)
    inputs = (torch.randn(a), torch.randn(b))
    result = check_module(model, inputs)
    assert result.ok and not result.unchecked, result.checks


def test_matmul_contraction_is_exact_and_dense_only_in_k():
    m, n, k = 96, 80, 112
    report = solar.analyze(Fn(torch.matmul), (torch.randn(m, k), torch.randn(k, n)), arch="H100-SXM", writeback=False)
    assert report.totals.contraction_flops == 2 * m * n * k
    assert report.totals.flops == 2 * m * n * k
    assert report.totals.dram_bytes == 4 * (m * k + k * n + m * n)


def test_bf16_linear_prices_bytes_per_tensor_dtype():
    lin = nn.Linear(64, 32, bias=False).to(torch.bfloat16)
    x = torch.randn(16, 64, dtype=torch.bfloat16)
    report = solar.analyze(lin, (x,), arch="H100-SXM", writeback=False)
    assert report.totals.dram_bytes == 2 * (16 * 64 + 64 * 32 + 16 * 32)
    assert report.totals.contraction_flops == 2 * 16 * 32 * 64


def _conv_macs(n, c, h, w, o, groups, kh, kw, stride, pad, dil):
    """Brute-force count of multiply-adds that touch a real (non-padding) input element."""
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    ih = np.arange(oh)[:, None] * stride[0] + np.arange(kh)[None, :] * dil[0] - pad[0]
    iw = np.arange(ow)[:, None] * stride[1] + np.arange(kw)[None, :] * dil[1] - pad[1]
    valid_h = ((ih >= 0) & (ih < h)).sum()
    valid_w = ((iw >= 0) & (iw < w)).sum()
    return n * o * (c // groups) * int(valid_h) * int(valid_w), oh, ow


def test_grouped_strided_padded_conv2d_counts_exact_work():
    n, c, h, w, o, groups = 2, 12, 17, 15, 18, 3
    conv = nn.Conv2d(c, o, (3, 5), stride=(2, 3), padding=(2, 1), dilation=(1, 2), groups=groups)
    x = torch.randn(n, c, h, w)
    report = solar.analyze(conv, (x,), arch="A100-SXM4-80GB")
    macs, oh, ow = _conv_macs(n, c, h, w, o, groups, 3, 5, (2, 3), (2, 1), (1, 2))
    dense = n * o * c * 3 * 5 * oh * ow
    assert report.totals.contraction_flops == 2 * macs
    assert report.totals.contraction_flops < 2 * dense / groups  # padding excluded, groups never dense
    # every input element is read (stride 2 with a 3-tall window covers all rows; columns: dilation 2)
    weights = o * (c // groups) * 3 * 5
    assert report.totals.dram_bytes <= 4 * (n * c * h * w + weights + o + n * o * oh * ow)
    assert check_module(conv, (x,)).ok


def test_depthwise_conv_is_never_dense():
    conv = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
    x = torch.randn(1, 8, 6, 6)
    report = solar.analyze(conv, (x,), arch="H100-SXM")
    macs, _, _ = _conv_macs(1, 8, 6, 6, 8, 8, 3, 3, (1, 1), (1, 1), (1, 1))
    assert report.totals.contraction_flops == 2 * macs


def test_transformer_block_whole_program_matches():
    class Block(nn.Module):
        def __init__(self, d=32, h=4):
            super().__init__()
            self.h = h
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
            q, k, v = (t.view(b, s, self.h, d // self.h).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1) / (d // self.h) ** 0.5).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            return x + self.mlp(F.layer_norm(x, (d,)))

    torch.manual_seed(0)
    result = check_module(Block(), (torch.randn(2, 8, 32),))
    assert result.ok and not result.unchecked, result.checks


def test_cat_stack_select_slice_are_index_maps():
    def fn(x, y):
        z = torch.cat([x, y[:, 1:]], dim=1)
        s = torch.stack([z, z * 2], dim=0)
        return s[1, :, ::2].relu() + x[:, 0:1]

    model, inputs = Fn(fn), (torch.randn(3, 4), torch.randn(3, 5))
    assert check_module(model, inputs).ok
    from solar.api import load

    program = load(model, inputs).program
    # views never copy: the only statements are those of the mul, the relu and the add
    assert {s.origin.op for s in program.stmts} == {"aten.mul.Tensor", "aten.relu.default", "aten.add.Tensor"}


def test_unsupported_op_is_named_with_source_line(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text(
        textwrap.dedent(
            """
            import torch
            class Model(torch.nn.Module):
                def forward(self, x):
                    y = x * 2
                    return torch.special.bessel_j0(y)
            def get_inputs():
                return [torch.randn(4, 4)]
            def get_init_inputs():
                return []
            """
        )
    )
    with pytest.raises(UnsupportedOpError, match=r"aten\.special_bessel_j0.*bad\.py:6"):
        solar.analyze(str(f), arch="H100-SXM")


def test_huge_model_analyses_without_allocating():
    path = ROOT / "benchmarks/suite/huge/1_Huge_linear_stack.py"
    tracemalloc.start()
    report = solar.analyze(str(path), arch="H200-SXM")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert report.totals.dram_bytes > 40e9  # the weights alone, read once
    assert peak < 300 * 2**20  # nothing near the model's 50 GB was allocated


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "solar.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.mark.parametrize(
    "args,pattern",
    [
        (("analyze", "examples/matmul.py", "--arch", "V100"), "unknown GPU 'V100'"),
        (("analyze", "no/such/file.py"), "no such file"),
        (("analyze", "examples/matmul.py", "--precision", "wrong"), "invalid choice"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_cli_errors_are_one_line_exit_2(args, pattern):
    proc = _cli(*args)
    assert proc.returncode == 2
    lines = [l for l in proc.stderr.splitlines() if l.strip() and "Warning" not in l and "return cls" not in l]
    assert len(lines) == 1 and pattern in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_broken_model_file_is_one_line(tmp_path):
    f = tmp_path / "broken.py"
    f.write_text("import torch\nclass Model(torch.nn.Module:\n    pass\n")
    proc = _cli("analyze", str(f))
    assert proc.returncode == 2
    assert "broken.py:2: syntax error" in proc.stderr and "Traceback" not in proc.stderr


def test_model_file_without_model_class(tmp_path):
    f = tmp_path / "empty.py"
    f.write_text("x = 1\n")
    with pytest.raises(ModelFileError, match="defines no Model, get_inputs"):
        solar.analyze(str(f))


def test_model_raising_in_forward_names_user_line(tmp_path):
    f = tmp_path / "raises.py"
    f.write_text(
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x @ torch.ones(3, 3)\n"
        "def get_inputs():\n    return [torch.randn(2, 5)]\n"
    )
    with pytest.raises(ModelFileError, match="raises.py:4"):
        solar.analyze(str(f))


def test_unknown_arch_lists_known():
    with pytest.raises(SpecError, match="H200-SXM"):
        solar.analyze(str(ROOT / "examples/matmul.py"), arch="X1")


def test_several_archs_return_a_list():
    reports = solar.analyze(str(ROOT / "examples/matmul.py"), arch=["L4", "H200-SXM"])
    assert [r.arch for r in reports] == ["L4", "H200-SXM"]
    assert reports[0].bounds["fused"].seconds > reports[1].bounds["fused"].seconds
