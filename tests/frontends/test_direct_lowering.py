"""The loader's direct path (solar.frontends.torch.direct) against the full re-trace: for every
module it takes, the decomposed graph (node for node: name, op, arguments), the output signature
and the lowered program's IR text are identical to `run_decompositions`'s; modules it does not take
fall back to the re-trace (and so are identical by construction)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import solar  # noqa: F401  (op schemas torchvision needs)
from solar.frontends.torch import convert, direct, loader
from solar.ir.printer import format_program


def _graph(ep) -> list[str]:
    nodes = [f"{n.op} {n.name} {n.target} {n.args} {n.kwargs}" for n in ep.graph.nodes]
    return nodes + [str(ep.graph_signature)]


def _trace(model, inputs, direct_path: bool):
    saved = loader.DIRECT
    loader.DIRECT = direct_path
    try:
        traced = loader.trace_module(model, inputs)
    finally:
        loader.DIRECT = saved
    return traced, format_program(convert.convert(traced))


def _took_direct(traced) -> bool:
    return any(
        n.meta.get("from_node") and n.meta["from_node"][0].pass_name == "solar.direct"
        for n in traced.exported.graph.nodes
    )


class ConvBnReluInPlace(nn.Module):
    def __init__(self, train: bool = False):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.fc = nn.Linear(8, 5)
        self.drop = nn.Dropout(0.2, inplace=True)
        self.train(train)

    def forward(self, x):
        y = torch.relu_(self.bn(self.conv(x)))
        y = self.pool(y)
        y = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return self.fc(self.drop(y) if not self.training else y)


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(4, 4, 3, padding=1)
        self.b = nn.Conv2d(4, 4, 1, stride=1)

    def forward(self, x):
        y = self.a(x)
        y += self.b(x)  # add_ on an intermediate
        y.mul_(0.5)
        return F.relu(y, inplace=True).to(torch.float16), y.sum()


class BufferCount(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(4))

    def forward(self, x):
        self.count.add_(1)  # a buffer mutation: a mutation output
        return x * self.count


class ViewInPlace(nn.Module):
    def forward(self, x):
        y = x * 2
        v = y.view(-1)
        v.mul_(3)  # a mutation through a view: falls back
        return y


class InputMutation(nn.Module):
    def forward(self, x):
        x.add_(1)  # a mutated user input: a mutation output
        return x * 2


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, mask):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        s = (q @ k.transpose(-1, -2)) / 4.0
        s = s.masked_fill(mask, float("-inf"))
        return self.proj(self.drop(torch.softmax(s, dim=-1) @ v)).to(torch.float16)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 8, bias=False)  # no bias: matmul, falls back

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Mixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 6, 3, stride=2)
        self.c3 = nn.Conv3d(2, 3, (1, 2, 2), padding=(0, 1, 1))
        self.fc = nn.Linear(6, 6)

    def forward(self, x, y):
        a = self.fc(self.c1(x).transpose(1, 2).contiguous())
        b = torch.log_softmax(self.c3(y).flatten(2), dim=-1)
        return a, b


class MetadataInPlace(nn.Module):
    def forward(self, x):
        y = x * 2
        y.t_()  # a shape mutation (inplace_view): falls back
        z = (x + 1).detach_()  # an autograd-state mutation: falls back
        return y, z


class CacheCopy(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(3, 4))

    def forward(self, x):
        self.cache.copy_(x * 2)  # copy_ into a buffer: the re-trace drops the copy; falls back
        return self.cache + 1


class InPlaceThenLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        z = x.clone()
        z.add_(x)  # the re-trace regenerates views of z (other names): falls back
        return self.fc(z)


class Wrap(nn.Module):
    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, x):  # nn.Linear's own argument is `input`, a name fx reserves
        return self.inner(x)


def _cases():
    x = torch.randn(2, 3, 16, 16)
    seq = torch.randn(2, 6, 16)
    mask = torch.ones(6, 6, dtype=torch.bool).triu(1)
    return [
        ("conv_bn_relu_eval", ConvBnReluInPlace(False).eval(), (x,), True),
        ("conv_bn_relu_train", ConvBnReluInPlace(True), (x,), True),
        ("residual_add_", Residual(), (torch.randn(1, 4, 8, 8),), True),
        ("buffer_mutation", BufferCount(), (torch.randn(3, 4),), True),
        ("input_mutation", InputMutation(), (torch.randn(3, 4),), True),
        ("view_in_place", ViewInPlace(), (torch.randn(3, 4),), False),
        ("attention_mask", Attention().eval(), (seq, mask), False),  # chunk, matmul: re-traced
        ("mlp_no_bias", Mlp(), (torch.randn(4, 5, 8),), False),
        ("metadata_in_place", MetadataInPlace(), (torch.randn(3, 4),), False),
        ("cache_copy_", CacheCopy(), (torch.randn(3, 4),), False),
        ("in_place_then_linear", InPlaceThenLinear(), (torch.randn(2, 4, 6),), False),
        ("conv1d_conv3d", Mixed(), (torch.randn(2, 4, 9), torch.randn(1, 2, 3, 4, 4)), True),
    ]


@pytest.mark.parametrize("name,model,inputs,takes", _cases(), ids=[c[0] for c in _cases()])
def test_direct_matches_retrace(name, model, inputs, takes):
    ref, ref_ir = _trace(model, inputs, False)
    got, got_ir = _trace(model, inputs, True)
    assert _took_direct(got) is takes
    assert not _took_direct(ref)
    assert _graph(got.exported) == _graph(ref.exported)
    assert got_ir == ref_ir


def test_linear_flattened_form():
    """linear on a contiguous 3-D and 4-D input: t, view, addmm, view, named as the re-trace names them."""
    for shape in ((2, 5, 8), (2, 3, 4, 8)):
        model = Wrap(Mlp().fc1)
        ref, ref_ir = _trace(model, (torch.randn(*shape),), False)
        got, got_ir = _trace(model, (torch.randn(*shape),), True)
        assert _took_direct(got)
        assert _graph(got.exported) == _graph(ref.exported)
        assert got_ir == ref_ir


def test_unknown_op_falls_back():
    """An op with no lowering and no rewrite leaves the whole graph to the re-trace."""
    ep = torch.export.export(Mlp().fc2, (torch.randn(2, 32),), strict=False)
    keep = loader.preserved_ops() | frozenset(convert_lowerings())
    assert direct.direct(ep, keep) is None


def test_reserved_placeholder_name_falls_back():
    """A forward argument named `input` (nn.Linear's): fx renames the placeholder, so the direct path
    leaves the graph to the re-trace."""
    got, _ = _trace(nn.Linear(4, 3), (torch.randn(2, 4),), True)
    assert not _took_direct(got)


def test_twin_of_in_place_ops():
    aten = torch.ops.aten
    assert direct._twin(aten.relu_.default) is aten.relu.default
    assert direct._twin(aten.add_.Tensor) is aten.add.Tensor
    assert direct._twin(aten.relu.default) is None
    assert direct._twin(aten.__iand__.Tensor) is None


def convert_lowerings():
    from solar.frontends.torch.lowerings import LOWERINGS

    return LOWERINGS
