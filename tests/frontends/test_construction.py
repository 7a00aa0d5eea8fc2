"""Model construction as on a real CPU with nothing large allocated (solar/frontends/torch/construct.py):
casts, values of small tensors, init functions, buffers, tied weights, tensor attributes updated in
forward, train-mode buffer updates; and the errors when a constructor reads what was never made."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import solar
from solar.api import load
from solar.errors import ModelFileError
from solar.frontends.torch.construct import SMALL_NUMEL, Unallocated, unallocated_like
from solar.ir.dtypes import DType
from solar.ir.nodes import Role

ROOT = Path(__file__).resolve().parents[2]
HEADER = "import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def _file(tmp_path: Path, body: str, name: str = "model.py") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body))
    return path


def _params(program) -> dict[str, tuple[tuple[int, ...], DType]]:
    return {t.name: (program.shape(t.name), t.dtype) for t in program.with_role(Role.PARAM)}


# Each case: a model file body and what its program must show. D = 2048: a 2048 x 2048 weight is
# 64x SMALL_NUMEL, so it is never allocated.
CASTS = [
    ("half", "self.half()", DType.F16),
    ("bfloat16", "self.bfloat16()", DType.BF16),
    ("to_dtype", "self.to(torch.bfloat16)", DType.BF16),
    ("to_device_dtype", "self.to('cuda', torch.float16)", DType.F16),
    ("double_then_float", "self.double(); self.float()", DType.F32),
    ("type", "self.type(torch.float16)", DType.F16),
]


@pytest.mark.parametrize("name,cast,dtype", CASTS, ids=[c[0] for c in CASTS])
def test_casts_in_constructor_reach_the_program(tmp_path, name, cast, dtype):
    torch_dtype = {
        DType.F16: "torch.float16",
        DType.BF16: "torch.bfloat16",
        DType.F32: "torch.float32",
    }[dtype]
    path = _file(
        tmp_path,
        f"""
        D = 2048
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(D, D)
                self.b = nn.Linear(D, D, bias=False)
                {cast}
            def forward(self, x):
                return self.b(torch.relu(self.a(x)))
        def get_inputs():
            return [torch.randn(8, D, dtype={torch_dtype})]
        """,
    )
    program = load(str(path)).program
    params = _params(program)
    assert sorted(params.values()) == sorted(
        [((2048, 2048), dtype), ((2048,), dtype), ((2048, 2048), dtype)]
    )
    report = solar.analyze(str(path), arch="H100-SXM")
    assert report.totals.contraction_flops == 2 * 2 * 8 * 2048 * 2048


def test_values_of_small_tensors_are_real(tmp_path):
    # torchvision ViT / ConvNeXt / Swin style: stochastic-depth rates as Python floats, a layer
    # count read with .item(), Python arithmetic on both.
    path = _file(
        tmp_path,
        """
        class Block(nn.Module):
            def __init__(self, d, p):
                super().__init__()
                self.p = p
                self.lin = nn.Linear(d, d)
            def forward(self, x):
                return x + self.lin(x) * (1 - self.p)
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                rates = torch.linspace(0, 0.3, 4).tolist()
                depth = int(torch.tensor([1, 1, 1]).sum().item())
                assert abs(rates[-1] - 0.3) < 1e-6 and depth == 3
                self.blocks = nn.Sequential(*[Block(512, rates[i]) for i in range(depth)])
            def forward(self, x):
                return self.blocks(x)
        def get_inputs():
            return [torch.randn(4, 512)]
        """,
    )
    report = solar.analyze(str(path), arch="H100-SXM")
    assert report.totals.contraction_flops == 3 * 2 * 4 * 512 * 512


def test_init_functions_on_large_and_small_weights(tmp_path):
    path = _file(
        tmp_path,
        """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.big = nn.Linear(1024, 1024)
                self.small = nn.Linear(16, 16)
                for lin in (self.big, self.small):
                    nn.init.trunc_normal_(lin.weight, std=0.02)
                    nn.init.xavier_uniform_(lin.weight)
                    nn.init.kaiming_normal_(lin.weight, mode="fan_out")
                    nn.init.orthogonal_(lin.weight)
                    nn.init.zeros_(lin.bias)
                self.small_sum = float(self.small.weight.abs().sum())  # a real value
                assert self.small_sum > 0
            def forward(self, x):
                return self.big(x)
        def get_inputs():
            return [torch.randn(2, 1024)]
        """,
    )
    report = solar.analyze(str(path), arch="H100-SXM")
    assert report.totals.contraction_flops == 2 * 2 * 1024 * 1024


def test_reading_a_value_of_a_large_tensor_is_one_line(tmp_path):
    path = _file(
        tmp_path,
        """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(1024, 1024)
                self.scale = self.lin.weight.abs().max().item()
            def forward(self, x):
                return self.lin(x)
        def get_inputs():
            return [torch.randn(2, 1024)]
        """,
    )
    with pytest.raises(
        ModelFileError,
        match=r"model\.py:\d+: building Model.*_local_scalar_dense.*does not allocate",
    ):
        solar.analyze(str(path), arch="H100-SXM")


def test_tied_weights_are_one_parameter(tmp_path):
    path = _file(
        tmp_path,
        """
        V, D = 8192, 1024
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(V, D)
                self.head = nn.Linear(D, V, bias=False)
                self.head.weight = self.embed.weight
                self.half()
            def forward(self, ids):
                return self.head(self.embed(ids))
        def get_inputs():
            return [torch.randint(0, V, (2, 16))]
        """,
    )
    params = _params(load(str(path)).program)
    assert list(params.values()) == [((8192, 1024), DType.F16)]


def test_buffers_small_and_large(tmp_path):
    # A small real buffer (rotary frequencies) and a large causal mask recomputed for structure.
    path = _file(
        tmp_path,
        """
        S, D = 512, 64
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                inv = 1.0 / (10000 ** (torch.arange(0, D, 2).float() / D))
                self.register_buffer("inv_freq", inv, persistent=False)
                self.register_buffer("mask", torch.tril(torch.ones(S, S, dtype=torch.bool)))
                assert float(self.inv_freq[0]) == 1.0
            def forward(self, q, k):
                s = q @ k.transpose(-1, -2)
                return s.masked_fill(~self.mask, float("-inf")).softmax(-1) * self.inv_freq.sum()
        def get_inputs():
            return [torch.randn(1, S, D), torch.randn(1, S, D)]
        """,
    )
    report = solar.analyze(str(path), arch="H100-SXM")
    assert any("buffer 'mask' is lower-triangular" in a for a in report.assumptions)
    assert (
        report.totals.contraction_flops == 2 * 64 * 512 * (512 + 1) // 2
    )  # only the kept triangle


def test_filled_buffers_are_not_replayed(tmp_path, monkeypatch):
    """A buffer made by a fill (an int8 weight of torch.zeros) has one value, so no band: it is
    not recomputed to look for one; a mask built from it still is."""
    from solar.frontends.torch import loader

    path = _file(
        tmp_path,
        """
        S = 512
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("w", torch.zeros(S, S, dtype=torch.int8))
                self.register_buffer("mask", torch.tril(torch.ones(S, S, dtype=torch.bool)))
            def forward(self, x):
                return (x @ self.w.to(x.dtype)).masked_fill(~self.mask, 0.0)
        def get_inputs():
            return [torch.randn(S, S)]
        """,
    )
    replayed = []
    real = loader.Recorder.replay
    monkeypatch.setattr(loader.Recorder, "replay", lambda self, t, *a: replayed.append(tuple(t.shape)) or real(self, t, *a))
    _, _, structure, _ = loader.build_file(path)
    assert [s.key for s in structure] == ["mask"]
    assert replayed == [(512, 512)]


def test_tensor_attribute_updated_in_forward(tmp_path):
    # KernelBench level 3 VanillaRNN: a plain tensor attribute reassigned in forward.
    path = _file(
        tmp_path,
        """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = torch.randn((8, 256))
                self.i2h = nn.Linear(1024 + 256, 256)
            def forward(self, x):
                self.hidden = self.hidden.to(x.device)
                self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
                return self.hidden
        def get_inputs():
            return [torch.randn(8, 1024)]
        """,
    )
    report = solar.analyze(str(path), arch="H100-SXM")
    assert report.totals.contraction_flops == 2 * 8 * (1024 + 256) * 256


class _AnchorsInAList(torch.nn.Module):
    """torchvision's AnchorGenerator keeps tensors in a list attribute (no buffer, no parameter)."""

    def __init__(self):
        super().__init__()
        self.cell_anchors = [torch.ones(16, 4), torch.zeros(16, 4)]
        self.scales = {"p2": torch.full((16, 4), 2.0)}
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x) + self.cell_anchors[0] * self.scales["p2"] + self.cell_anchors[1]


def test_tensors_in_list_and_dict_attributes_through_the_api():
    # a real tensor in a container must not be deep-copied under the fake mode (a torch traceback)
    report = solar.analyze(_AnchorsInAList(), [torch.randn(16, 4)], arch="H100-SXM")
    assert report.totals.contraction_flops == 2 * 16 * 4 * 4


def test_batchnorm_running_stats_update_in_train_mode(tmp_path):
    path = _file(
        tmp_path,
        """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)
                self.bn = nn.BatchNorm2d(64)
            def forward(self, x):
                return torch.relu(self.bn(self.conv(x)))
        def get_inputs():
            return [torch.randn(4, 64, 32, 32)]
        """,
    )
    report = solar.analyze(str(path), arch="H100-SXM", mode="train")
    assert report.totals.contraction_flops > 0


def test_channels_last_strides_reach_the_traced_graph(tmp_path):
    path = _file(
        tmp_path,
        """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(64, 128, 3, padding=1)
                self.to(memory_format=torch.channels_last)
            def forward(self, x):
                return self.conv(x)
        def get_inputs():
            return [torch.randn(2, 64, 56, 56).to(memory_format=torch.channels_last)]
        """,
    )
    from solar.frontends.torch import trace_file

    ep = trace_file(str(path)).exported
    vals = [n.meta["val"] for n in ep.graph.nodes if n.op == "placeholder"]
    four_d = [v for v in vals if v.dim() == 4]
    assert four_d and all(v.is_contiguous(memory_format=torch.channels_last) for v in four_d)


def test_unallocated_mode_keeps_small_real_and_large_unknown():
    with Unallocated() as mode:
        small = torch.arange(10.0)
        big = torch.ones(SMALL_NUMEL + 1)
        view = big[:4]
        derived = big.sum()
        half = big.half()
        small.add_(1)
        assert small.tolist()[0] == 1.0
    assert not mode.is_unknown(small)
    assert all(mode.is_unknown(t) for t in (big, view, derived, half))
    assert half.dtype == torch.float16 and half.shape == big.shape


def test_in_place_ops_on_unknown_data():
    """An in-place op on unknown data with no other tensor (init's uniform_, clamp_) returns its
    argument, still unknown, without a meta run; one with another tensor keeps the meta run's
    checks (a shape that does not broadcast fails as on a real CPU)."""
    from unittest import mock

    with Unallocated() as mode:
        big = torch.empty(SMALL_NUMEL + 1)
        with mock.patch.object(Unallocated, "_on_meta", side_effect=AssertionError("meta run")):
            out = big.uniform_(-1, 1).erfinv_().clamp_(min=-2, max=2)
        assert out is big and mode.is_unknown(big)
        with pytest.raises(RuntimeError):
            big.add_(torch.ones(3))
        big.add_(torch.ones(1))
        assert mode.is_unknown(big)


def test_tensor_larger_than_memory_is_address_space_only():
    # 64 GiB of fp32, more than this machine's RAM + swap: mapped without reserving memory.
    script = (
        "import resource, torch\n"
        "from solar.frontends.torch.construct import Unallocated\n"
        "with Unallocated():\n"
        "    e = torch.nn.Embedding(1 << 24, 1024)\n"
        "    e.half()\n"
        "assert e.weight.dtype == torch.float16 and e.weight.shape == (1 << 24, 1024)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout.split()[-1]) < 2 * 1024 * 1024  # kB: far below the 64 GiB + 32 GiB made


def test_unallocated_like_keeps_strides():
    m = torch.empty_strided((4, 8, 16, 16), (2048, 1, 128, 8), device="meta")
    t = unallocated_like(m)
    assert t.stride() == m.stride() and t.device.type == "cpu"
