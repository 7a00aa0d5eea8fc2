"""Argument classes of eager calls (solar.frontends.argclass): the tokens read from a call's
arguments, the same from real (meta) tensors as the calibration reads them and from an exported
graph's nodes as the frontend does."""

from __future__ import annotations

import pytest
import torch

from solar.frontends.argclass import features, parse, text
from solar.frontends.torch.eager import pre_decomposition_calls

META = "meta"


def t(*shape, dtype=torch.float32, channels_last=False):
    x = torch.empty(*shape, device=META, dtype=dtype)
    return x.contiguous(memory_format=torch.channels_last) if channels_last else x


CONV = "torch.nn.functional.conv2d"
BN_F, BN_ATEN = "torch.nn.functional.batch_norm", "aten.batch_norm.default"
c64 = t(64)


@pytest.mark.parametrize("op, args, kwargs, expected", [
    (CONV, (t(1, 64, 56, 56), t(64, 64, 3, 3)), {}, "cin>=16 cin>=64 dense float32 kernel3x3 nchw undilated"),
    (CONV, (t(1, 64, 56, 56), t(64, 64, 3, 3), c64, 1, 1, 1, 1), {}, "bias cin>=16 cin>=64 dense float32 kernel3x3 nchw undilated"),
    (CONV, (t(1, 8, 8, 8, dtype=torch.float16), t(8, 8, 1, 1, dtype=torch.float16)), {}, "dense half kernel1x1 nchw undilated"),
    (CONV, (t(1, 8, 8, 8, dtype=torch.bfloat16), t(8, 8, 1, 1, dtype=torch.bfloat16)), {}, "dense half kernel1x1 nchw undilated"),
    (CONV, (t(1, 32, 8, 8), t(32, 1, 3, 3)), {"groups": 32}, "cin>=16 float32 kernel3x3 nchw undilated"),  # depthwise
    (CONV, (t(1, 32, 8, 8, channels_last=True), t(32, 32, 3, 3)), {}, "cin>=16 dense float32 kernel3x3 undilated"),
    (CONV, (t(1, 32, 8, 8), t(32, 32, 3, 3)), {"dilation": (2, 2)}, "cin>=16 dense float32 kernel3x3 nchw"),
    (CONV, (t(2, 16, 8, 8), t(16, 8, 3, 3)), {"groups": 2}, "cin>=16 float32 kernel3x3 nchw undilated"),  # 8 x 2 groups
    (BN_F, (t(2, 8, 4, 4), c64, c64, c64, c64, True), {}, "affine float32 rank4 stats train"),
    (BN_F, (t(2, 8), None, None, None, None), {"training": True}, "float32 rank2 train"),
    (BN_F, (t(2, 8, 4, dtype=torch.float16), t(8, dtype=torch.float16), t(8, dtype=torch.float16),
            t(8, dtype=torch.float16), t(8, dtype=torch.float16)), {}, "affine eval half params_half rank3 stats"),
    (BN_F, (t(2, 8, 4, dtype=torch.float16), c64, c64, c64, c64), {}, "affine eval half rank3 stats"),  # mixed precision
    (BN_ATEN, (t(2, 8, 4, 4), c64, c64, c64, c64, False, 0.1, 1e-5, True), {}, "affine eval float32 rank4 stats"),
    ("aten.cat.default", ([t(1, 8, 4, 4), t(1, 8, 4, 4)], 1), {}, "float32 rank4"),
    ("torch.cat", ([t(2, 8, dtype=torch.bfloat16)] * 8,), {"dim": 1}, "half inputs>=4 inputs>=8 rank2"),
    ("aten.cat.default", ([t(3)] * 32, 0), {}, "float32 inputs>=32 inputs>=4 inputs>=8 rank1"),
    ("aten.cat.default", ([], 0), {}, ""),  # nothing to read: no class
    ("aten.relu.default", (t(2, 8),), {}, ""),  # no binding: no class, the op floor applies
    (CONV, ("not a tensor", t(8, 8, 3, 3)), {}, ""),  # unreadable arguments: no class
    (CONV, (), {}, ""),
])
def test_features(op, args, kwargs, expected):
    got = features(op, args, kwargs)
    assert text(got) == expected
    assert parse(text(got)) == got


def test_the_functional_and_the_aten_order_give_one_class():
    x, w, b, rm, rv = t(2, 8, 4, 4), t(8), t(8), t(8), t(8)
    assert features(BN_F, (x, rm, rv, w, b, True)) == features(BN_ATEN, (x, w, b, rm, rv, True, 0.1, 1e-5, True))
    assert features(BN_F, (x, rm, rv, None, None, False)) == features(BN_ATEN, (x, None, None, rm, rv, False, 0.1, 1e-5, True))


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(64, 64, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


@pytest.mark.parametrize("train, half, bn", [
    (True, False, "affine float32 rank4 stats train"),
    (False, False, "affine eval float32 rank4 stats"),
    (False, True, "affine eval half params_half rank4 stats"),
])
def test_an_exported_graph_gives_each_call_its_class(train, half, bn):
    net = _Net().train(train)
    x = torch.randn(1, 64, 8, 8)
    if half:
        net, x = net.half(), x.half()
    graph = torch.export.export(net, (x,)).graph
    got = {c.op: text(c.features) for c in pre_decomposition_calls(graph)}
    dtype = "half" if half else "float32"
    assert got["aten.conv2d.default"] == f"cin>=16 cin>=64 dense {dtype} kernel3x3 nchw undilated"
    assert got["aten.batch_norm.default"] == bn
    assert got["aten.relu.default"] == ""


def test_an_exported_concatenation_gives_its_inputs_class():
    """cat's inputs are a list of nodes: each read from its recorded value (an Inception-style join
    of four branches)."""
    class Join(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.cat([x, x + 1, x * 2, torch.relu(x)], 1)

    graph = torch.export.export(Join(), (torch.randn(1, 8, 4, 4),)).graph
    got = {c.op: text(c.features) for c in pre_decomposition_calls(graph)}
    assert got["aten.cat.default"] == "float32 inputs>=4 rank4"


def test_a_size_that_cannot_be_read_gives_no_class():
    class Symbolic:
        dtype = torch.float32
        shape = (1, 64, 8, 8)

        def is_contiguous(self):
            raise RuntimeError("data-dependent")

    assert features(CONV, (Symbolic(), t(64, 64, 3, 3))) == frozenset()
