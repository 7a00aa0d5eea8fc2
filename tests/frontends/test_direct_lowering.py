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
from solar.frontends.torch.direct_graph import Unsupported
from solar.frontends.torch.lowerings import preserved_ops
from solar.frontends.torch.traced import Decomposition, Route, TraceOptions
from solar.ir.printer import format_program


def _graph(ep) -> list[str]:
    nodes = [f"{n.op} {n.name} {n.target} {n.args} {n.kwargs}" for n in ep.graph.nodes]
    return nodes + [str(ep.graph_signature)]


def _options(direct_path: bool) -> TraceOptions:
    return TraceOptions(Decomposition.DIRECT if direct_path else Decomposition.RETRACE)


def _trace(model, inputs, direct_path: bool):
    traced = loader.trace_module(model, inputs, options=_options(direct_path))
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
        self.fc2 = nn.Linear(32, 8, bias=False)  # no bias: t, view, mm, _unsafe_view

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


class InPlaceThroughAlias(nn.Module):
    """A counter as HF's static cache keeps one: a tensor built in forward, read through `to` that
    changes nothing (an alias) and then incremented in place through that alias."""

    def forward(self, x):
        count = torch.tensor(3)
        alias = count.to(dtype=torch.int64)
        positions = torch.arange(2, 6) + alias
        alias.add_(1)
        return x[:, :4] * positions


class InPlaceAliasViewed(nn.Module):
    """As InPlaceThroughAlias, with a view of the counter beside the alias: falls back."""

    def forward(self, x):
        count = torch.tensor([3])
        flat = count.view(-1)
        alias = count.to(dtype=torch.int64)
        alias.add_(1)
        return x * flat


class CacheWriteThenView(nn.Module):
    """Rows written into an input in place, then read through views of it (a grouped-query
    attention's repeated keys: unsqueeze, expand, reshape), one view read twice and viewed again."""

    def forward(self, cache, rows, index):
        cache.index_copy_(1, index, rows)
        keys = cache.unsqueeze(1).expand(2, 3, 4, 5).reshape(6, 4, 5)
        first = cache.transpose(0, 1)
        second = first.unsqueeze(0)
        return keys * 2, first + 1, first.sum(), second * 3


class ConstantBesideBuffers(nn.Module):
    """A tensor built in forward (a lifted constant) beside the root's and a submodule's buffers."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(4))
        self.norm = nn.BatchNorm1d(4).eval()

    def forward(self, x):
        return self.norm(x) * self.scale + torch.tensor(2.0)


class InPlaceThenLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        z = x.clone()
        z.add_(x)  # the re-trace regenerates views of z (other names): falls back
        return self.fc(z)


class HfMasks(nn.Module):
    """A causal and a padding mask built as HF transformers builds them (masking_utils): arange
    positions, new_ones, `&` and `|` of boolean masks, to(device, dtype), to(dtype=, device=), and
    the packed-sequence check (diff of the positions with a prepended row)."""

    def forward(self, x, attention_mask):
        b, n = attention_mask.shape
        pad = attention_mask.to(x.device, torch.bool)  # aten.to.device: int64 -> bool
        q = torch.arange(n, device=x.device) + 0
        kv = torch.arange(n, device=x.device) + 0
        causal = kv[None, None, None, :] <= q[None, None, :, None]
        mask = causal.new_ones((), dtype=torch.bool) & causal.to(dtype=torch.bool, device=x.device)
        mask = mask & pad[:, None, None, :]
        mask = mask | (kv[None, None, None, :] == q[None, None, :, None])
        positions = torch.arange(n, device=x.device).unsqueeze(0)
        first = positions[:, :1] - 1
        packed = (torch.diff(positions, dim=-1, prepend=first) != 1).sum()
        bias = mask.to(dtype=x.dtype, device=x.device)  # aten.to.dtype_layout: bool -> float
        return x.sum(-1)[:, None, None, :] * bias, packed


class Factories(nn.Module):
    """arange with a dtype, new_ones of a float tensor, to(device) changing nothing (an alias)."""

    def forward(self, x):
        r = torch.arange(x.shape[-1], dtype=torch.float32, device=x.device)
        ones = x.new_ones((x.shape[0], 1))
        return x.to(x.device, torch.float32) * r + ones, torch.arange(3, device=x.device)


class MatMuls(nn.Module):
    """matmul as torch._decomp decomposes it: mm, a folded mm (a contiguous batch times a matrix),
    expand + view + bmm (a 4-D batch, a broadcast one: clone + _unsafe_view), a non-contiguous
    batch times a parameter (requires_grad: the fold with a copy)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 8))

    def forward(self, x, y, z):
        a = x @ y[0, 0]  # 3-D @ 2-D, contiguous: fold
        b = z @ z.transpose(-1, -2)  # 4-D @ 4-D: bmm
        c = z @ y[:1]  # broadcast batch
        d = x.transpose(0, 1) @ self.w.t()  # non-contiguous batch, a parameter: fold through a copy
        e = x[0] @ y[0, 0]  # 2-D @ 2-D: mm
        f = x.transpose(0, 1) @ y[0, 0]  # non-contiguous, no grad: bmm
        return a, b, c, d, e, f


class LinearNonContiguous(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 5)
        self.nb = nn.Linear(8, 5, bias=False)

    def forward(self, x):
        t = x.transpose(0, 1)  # matmul (unfolded bmm) and an out-of-place bias add
        return self.fc(t), self.nb(t)


class ShapeOps(nn.Module):
    def forward(self, x):
        a, b, c = x.chunk(3, dim=-1)  # one split.Tensor
        p, q, r = x.chunk(4, 1)  # uneven: split into three of two
        f = x.transpose(1, 2).flatten(1)  # flatten of a non-contiguous tensor: clone + _unsafe_view
        g = x[:, :, :4].flatten(0, 1)  # viewable: a view
        return a * 2, b, c, p - q + r, x.unflatten(-1, (2, 4)), x.unflatten(1, [3, 2]), f, g


class ScalarFills(nn.Module):
    def forward(self, x, m, h):
        a = torch.where(x > 0, x, 0.0)  # where.ScalarOther: scalar_tensor + where.self
        b = torch.where(x > 0, x, 1)  # an int other on a float tensor
        c = x.masked_fill(m, -1e4)  # masked_fill.Scalar
        d = h.masked_fill(m, -1e4)  # a float16 tensor
        e = torch.min(x, x * 2)  # min.other: minimum
        f = torch.where(h > 0, h, -1.0)
        return a, b, c, d, e, f


class Zeros(nn.Module):
    def forward(self, x):
        a = torch.zeros(x.shape[0], 3, dtype=torch.long) + torch.zeros((x.shape[0], 3), device=x.device)
        b = torch.zeros_like(x) + x.new_zeros((x.shape[0], x.shape[1])).sum()
        c = torch.zeros(2, dtype=torch.bool) | x.new_zeros((2,), dtype=torch.bool)
        return a, b, c, torch.zeros_like(x, dtype=torch.float16)


class HardActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        y = F.hardswish(self.conv(x), inplace=True)  # hardswish_ on an intermediate
        s = F.hardsigmoid(F.adaptive_avg_pool2d(y, 1))
        return F.adaptive_avg_pool2d(y * s, (2, 2)), F.hardswish(y), F.hardsigmoid(y, inplace=True)


class PoolDivide(nn.Module):
    def forward(self, x, i):
        a = F.adaptive_avg_pool1d(x, 1)  # unsqueeze, mean, squeeze
        b = F.adaptive_avg_pool1d(x, 3)  # unsqueeze, _adaptive_avg_pool2d, squeeze
        c = F.adaptive_avg_pool1d(x.transpose(1, 2), 1)  # a channels-last mean: as_strided before squeeze
        d = torch.flatten(c, 1)  # a plain view of it (KernelBench SwinMLP's head)
        return a, b, c, d, i // 3, torch.floor_divide(i, i + 1)  # div.Tensor_mode(floor)


class Transposed(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 3, 2, stride=2)
        self.up2 = nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1, bias=False)
        self.up1 = nn.ConvTranspose1d(4, 2, 3)

    def forward(self, x, s):
        ones = torch.ones(10, 10, device=x.device) + torch.ones((1, 1, 1), dtype=torch.bool, device=x.device)
        return self.up(x) * ones, self.up2(x), self.up1(s), s[:, :1].expand_as(s)


class TensorConstant(nn.Module):
    def forward(self, x):
        scale = torch.log(torch.tensor(1.0 / 0.01))  # lift_fresh_copy + detach_: clone
        return x * scale, x // torch.tensor(3.0)


class ChannelsLastPool(nn.Module):
    """A channels-last 1x1 pooling: ATen's mean then as_strided_ (an as_strided after the mean),
    read by a permute (timm ConvNeXt's head) and by a flatten (ResNet's)."""

    def forward(self, x):
        p = F.adaptive_avg_pool2d(x, 1)
        q = torch.flatten(x.mean((2, 3), keepdim=True), 1)  # a mean of the user's: no as_strided
        return p.permute(0, 2, 3, 1) * 2, torch.flatten(F.adaptive_avg_pool2d(x + 1, (1, 1)), 1), q


class HardHalf(nn.Module):
    def forward(self, x):
        return F.hardswish(x)  # float16: computed in float32 and cast back, falls back


def _tiny_hf(kind: str) -> tuple[nn.Module, tuple]:
    """A real transformers model from a tiny config (random weights), with a padding mask."""
    import transformers as tf

    if kind == "llama":
        config = tf.LlamaConfig(
            vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        )
        model = tf.LlamaModel(config)
    elif kind == "bert":
        config = tf.BertConfig(
            vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
            num_attention_heads=4, max_position_embeddings=64,
        )
        model = tf.BertModel(config, add_pooling_layer=False)
    else:
        config = tf.GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=4, n_positions=64)
        model = tf.GPT2Model(config)
    ids = torch.randint(0, 64, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    return HfLastHidden(model.eval()), (ids, mask)


class HfLastHidden(nn.Module):
    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, input_ids, attention_mask):
        return self.net(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


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
        ("attention_mask", Attention().eval(), (seq, mask), True),  # chunk, matmul, masked_fill
        ("mlp_no_bias", Mlp(), (torch.randn(4, 5, 8),), True),
        ("mlp_no_bias_2d", Mlp(), (torch.randn(4, 8),), True),
        ("hf_masks", HfMasks(), (torch.randn(2, 5, 4), torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])), True),
        ("factories", Factories(), (torch.randn(3, 4),), True),
        ("metadata_in_place", MetadataInPlace(), (torch.randn(3, 4),), False),
        ("cache_copy_", CacheCopy(), (torch.randn(3, 4),), False),
        ("in_place_then_linear", InPlaceThenLinear(), (torch.randn(2, 4, 6),), False),
        ("in_place_through_alias", InPlaceThroughAlias(), (torch.randn(3, 6),), True),
        ("in_place_alias_viewed", InPlaceAliasViewed(), (torch.randn(3, 4),), False),
        ("constant_beside_buffers", ConstantBesideBuffers(), (torch.randn(2, 4),), True),
        ("cache_write_then_view", CacheWriteThenView(),
         (torch.randn(2, 4, 5), torch.randn(2, 1, 5), torch.tensor([2])), True),
        ("conv1d_conv3d", Mixed(), (torch.randn(2, 4, 9), torch.randn(1, 2, 3, 4, 4)), True),
        ("matmul", MatMuls(), (torch.randn(2, 6, 8), torch.randn(2, 3, 8, 5), torch.randn(2, 3, 4, 8)), True),
        ("linear_non_contiguous", LinearNonContiguous(), (torch.randn(2, 6, 8),), True),
        ("chunk_unflatten", ShapeOps(), (torch.randn(2, 6, 8),), True),
        ("where_masked_fill_min", ScalarFills(), (torch.randn(2, 6, 8), torch.rand(6, 8) > 0.5,
                                                  torch.randn(2, 6, 8).half()), True),
        ("zeros", Zeros(), (torch.randn(3, 4),), True),
        ("hardswish_hardsigmoid", HardActivations().eval(), (torch.randn(1, 3, 6, 6),), True),
        ("pool1d_floor_divide", PoolDivide(), (torch.randn(2, 4, 6), torch.arange(10)), True),
        ("conv_transpose_ones_expand_as", Transposed(), (torch.randn(1, 4, 5, 5), torch.randn(2, 4, 6)), True),
        ("tensor_constant", TensorConstant(), (torch.randn(3, 4),), True),
        ("channels_last_pool", ChannelsLastPool(), (torch.randn(2, 6, 4, 4).to(memory_format=torch.channels_last),),
         True),
        ("hardswish_half", HardHalf(), (torch.randn(3, 4).half(),), False),
        ("batch_norms_half_channels_last", BatchNorms().half(),
         (torch.randn(2, 6, 5).half(), torch.randn(2, 6, 4, 4).half().to(memory_format=torch.channels_last),
          torch.randn(2, 6, 2, 3, 3).half()), True),
        ("batch_norm_no_running_stats", nn.BatchNorm2d(4, track_running_stats=False), (torch.randn(2, 4, 3, 3),), False),
        ("batch_norm_then_view_in_place", BatchNormViewInPlace(), (torch.randn(2, 4, 3, 3),), False),
    ]


class BatchNorms(nn.Module):
    """BatchNorm 1-D, 2-D (channels-last input) and 3-D, in training mode, with a slice of a channel
    (a non-dense input) in eval mode."""

    def __init__(self):
        super().__init__()
        self.b1, self.b2, self.b3 = nn.BatchNorm1d(6), nn.BatchNorm2d(6), nn.BatchNorm3d(6)
        self.eval_bn = nn.BatchNorm2d(6).eval()

    def forward(self, x, y, z):
        return self.b1(x), self.b2(y), self.b3(z), self.eval_bn(y[:, :, 1:])


class BatchNormViewInPlace(nn.Module):
    """A batch norm beside a view of an in-place result (which the direct path leaves to the
    re-trace): the model is exported again without the batch-norm routing."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.bn(x).relu_()
        y.view(-1).add_(1)
        return y


@pytest.mark.parametrize("name,model,inputs,takes", _cases(), ids=[c[0] for c in _cases()])
def test_direct_matches_retrace(name, model, inputs, takes):
    ref, ref_ir = _trace(model, inputs, False)
    got, got_ir = _trace(model, inputs, True)
    assert _took_direct(got) is takes
    assert not _took_direct(ref)
    assert _graph(got.exported) == _graph(ref.exported)
    assert got_ir == ref_ir
    assert ref.route == Route(Decomposition.RETRACE)
    assert got.route.decomposition is (Decomposition.DIRECT if takes else Decomposition.RETRACE)
    assert (got.route.refused is None) is takes
    assert got.notes()[-1] == got.route.describe()


@pytest.mark.parametrize("kind", ["llama", "bert", "gpt2"])
def test_tiny_hf_model_takes_direct(kind):
    """A real transformers model (tiny config): its mask building, rotary embedding, bias-free
    projections and attention reshapes all go the direct path, node for node the re-trace's graph."""
    model, inputs = _tiny_hf(kind)
    ref, ref_ir = _trace(model, inputs, False)
    got, got_ir = _trace(model, inputs, True)
    assert _took_direct(got)
    assert _graph(got.exported) == _graph(ref.exported)
    assert got_ir == ref_ir


@pytest.mark.parametrize("config", ["llama2-7b", "llama2-70b"])
@pytest.mark.parametrize("kind", ["prefill", "decode"])
def test_hf_step_takes_direct(config, kind):
    """An `hf:` serving step (two layers): the static cache's positions (arange from the cached
    length), its counter incremented in place, the K/V written by index_copy_ into the cache inputs
    and (70B: grouped-query attention) the cache read through views after the write all go the
    direct path, node for node the re-trace's graph."""
    from solar.frontends.torch import hf

    spec = f"tests/fixtures/hf/{config}.json"
    step = hf.scenario(kind, 1, 8 if kind == "prefill" else None, None if kind == "prefill" else 8)
    ref, ref_ir = _trace(*_step_of(hf.build(spec, step, layers=2)), False)
    got, got_ir = _trace(*_step_of(hf.build(spec, step, layers=2)), True)
    assert got.route == Route(Decomposition.DIRECT)
    assert _graph(got.exported) == _graph(ref.exported)
    assert got_ir == ref_ir


def _step_of(built) -> tuple:
    return built.module, built.inputs


_STATE = [
    # (kind, target) of each input in the training IR's order -> targets in the re-trace's order
    ((("P", "w"), ("B", "scale"), ("B", "norm.mean"), ("B", "norm.var"), ("C", "lifted_tensor_0"),
      ("U", "x")),
     ("w", "scale", "lifted_tensor_0", "norm.mean", "norm.var", "x")),
    ((("B", "a.b.m"), ("B", "a.n"), ("B", "c.k"), ("C", "a.t"), ("C", "top")),
     ("top", "a.n", "a.t", "a.b.m", "c.k")),
    ((("P", "w"), ("U", "x")), ("w", "x")),
]


@pytest.mark.parametrize("inputs,expected", _STATE)
def test_retrace_order(inputs, expected):
    """Buffers and tensor constants in the re-trace's order: module by module, a module's own first."""
    from torch.export.graph_signature import InputKind, InputSpec, TensorArgument

    kinds = {"P": InputKind.PARAMETER, "B": InputKind.BUFFER, "C": InputKind.CONSTANT_TENSOR,
             "U": InputKind.USER_INPUT}
    specs = [
        InputSpec(kinds[k], TensorArgument(f"n{i}"), None if k == "U" else t, True if k == "B" else None)
        for i, (k, t) in enumerate(inputs)
    ]
    got = direct.retrace_order(specs)
    assert tuple(s.target or "x" for s in got) == expected


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
    ep = torch.export.export(Logit(), (torch.rand(2, 3, 4),), strict=False)
    keep = preserved_ops() | frozenset(convert_lowerings())
    with pytest.raises(Unsupported, match="no rewrite of aten.logit.default"):
        direct.direct(ep, keep)


class Logit(nn.Module):
    def forward(self, x):
        return torch.logit(x)  # aten.logit: neither lowered whole nor rewritten


def test_reserved_placeholder_name_falls_back():
    """A forward argument named `input` (nn.Linear's): fx renames the placeholder, so the direct path
    leaves the graph to the re-trace."""
    got, _ = _trace(nn.Linear(4, 3), (torch.randn(2, 4),), True)
    assert not _took_direct(got)
    assert got.notes()[-1] == (
        "route: run_decompositions re-trace (direct path refused: input name 'input' is reserved by torch.fx)"
    )


def test_twin_of_in_place_ops():
    aten = torch.ops.aten
    assert direct.functional_twin(aten.relu_.default) is aten.relu.default
    assert direct.functional_twin(aten.add_.Tensor) is aten.add.Tensor
    assert direct.functional_twin(aten.relu.default) is None
    assert direct.functional_twin(aten.__iand__.Tensor) is None


def convert_lowerings():
    from solar.frontends.torch.lowerings import LOWERINGS

    return LOWERINGS


# Corpus files (benchmarks/models/) whose shrunk variants take the direct path, node for node the
# re-trace's graph: the ops of direct_ops (matmul, chunk, unflatten, where/masked_fill with a scalar,
# min, zeros*, hardswish/hardsigmoid, adaptive pooling, a non-contiguous flatten or linear).
DIRECT_CORPUS = (
    "einops_mlp_mixer_fp16", "tv_vgg16_bn_fp16", "tv_mobilenet_v3_large_fp32", "hf_clip_vit_b32_fp16",
    "timm_swin_tiny_fp16", "tv_vit_b_16_bf16", "tv_detr_r50_fp16", "hf_t5_base_fp32", "hf_phi3_mini_fp16",
)


def _trace_file(path, direct_path: bool):
    traced = loader.trace_file(path, options=_options(direct_path))
    return traced, format_program(convert.convert(traced))


@pytest.mark.slow
@pytest.mark.parametrize("stem", DIRECT_CORPUS)
def test_corpus_model_takes_direct(stem, tmp_path):
    from pathlib import Path

    from benchmarks.model_corpus import MODELS, write_shrunk

    path = write_shrunk(Path(MODELS) / f"{stem}.py", tmp_path)
    ref, ref_ir = _trace_file(path, False)
    got, got_ir = _trace_file(path, True)
    assert _took_direct(got)
    assert _graph(got.exported) == _graph(ref.exported)
    assert got_ir == ref_ir


_BN_CASES = [
    (dtype, params, shape, channels_last, training)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64)
    for params in ("same", torch.float32)
    for shape, channels_last in (((4, 6), False), ((2, 6, 5), False), ((2, 6, 3, 5), False),
                                 ((2, 6, 3, 5), True), ((2, 6, 2, 3, 4), False))
    for training in (True, False)
]


def _meta(values) -> list:
    return [(tuple(v.shape), v.dtype, v.stride(), v.device) for v in values]


@pytest.mark.parametrize("dtype,params,shape,channels_last,training", _BN_CASES)
def test_batch_norm_value_is_the_ops(dtype, params, shape, channels_last, training):
    """direct.batch_norm_val (the value of a batch-norm node without running torch's decomposition)
    is the value the op itself gives, output and statistics: shapes, dtypes, strides, device."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    aten = torch.ops.aten
    fake = FakeTensorMode()
    with fake:
        x = torch.empty(shape, dtype=dtype)
        x = x.to(memory_format=torch.channels_last) if channels_last else x
        p = [torch.empty(6, dtype=dtype if params == "same" else params) for _ in range(4)]
        if training:
            want = aten._native_batch_norm_legit_functional.default(x, *p, True, 0.1, 1e-5)
        else:
            want = aten._native_batch_norm_legit_no_training.default(x, *p, 0.1, 1e-5)
    got = direct.batch_norm_val(fake, x, training)
    assert got is not None and _meta(got) == _meta(want)


def test_batch_norm_value_leaves_other_layouts_to_the_op():
    from torch._subclasses.fake_tensor import FakeTensorMode

    fake = FakeTensorMode()
    with fake:
        x = torch.empty(2, 6, 4, 4)[:, :, 1:]
    assert direct.batch_norm_val(fake, x, True) is None


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "slice"])
def test_solar_batch_norm_is_f_batch_norm(training, layout):
    """solar::batch_norm, which the loader routes F.batch_norm to: the real op computes what
    F.batch_norm computes (running statistics updated alike), the fake one the same metadata."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    op = torch.ops.solar.batch_norm.default
    x = torch.randn(3, 4, 5, 6)
    x = {"contiguous": x, "channels_last": x.to(memory_format=torch.channels_last), "slice": x[:, :, 1:]}[layout]
    w, b = torch.randn(4), torch.randn(4)
    stats = [torch.randn(4), torch.rand(4) + 0.5]
    mine = [t.clone() for t in stats]
    want = F.batch_norm(x, *stats, w, b, training, 0.1, 1e-5)
    got = op(x, *mine, w, b, training, 0.1, 1e-5)
    torch.testing.assert_close(got, want)
    for a, c in zip(mine, stats):
        torch.testing.assert_close(a, c)
    with FakeTensorMode(allow_non_fake_inputs=True):
        assert _meta([op(x, *mine, w, b, training, 0.1, 1e-5)]) == _meta([F.batch_norm(x, *stats, w, b, training, 0.1, 1e-5)])


def test_solar_batch_norm_keeps_f_batch_norms_check():
    """One value per channel while training: the same error as F.batch_norm, from the trace."""
    from solar.errors import TraceError

    with pytest.raises(TraceError, match="Expected more than 1 value per channel when training"):
        loader.trace_module(nn.BatchNorm1d(4).train(), (torch.randn(1, 4),))
