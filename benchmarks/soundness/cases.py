"""The soundness sweep's cases: programs where a decomposition's internal precision or an
aliased output could make a bound exceed what real kernels do. Each case builds an in-memory module
and its inputs; `build()` is called under `torch.device("cuda")` to time it and under a fake-tensor
mode to analyse it, so a case is one definition for both sides.

SDPA cases are timed once per backend (`torch.nn.attention.sdpa_kernel`) that accepts them; the
bound of an SDPA case claims every backend, so the oracle compares it with the fastest of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
SDPA_BACKENDS = ("math", "efficient", "flash", "cudnn")


@dataclass(frozen=True)
class Case:
    name: str
    category: str  # sdpa | linear | norm | softmax | gelu | conv | alias | model
    dtype: str  # a key of DTYPES
    build: Callable[[], tuple[nn.Module, list]]
    modes: tuple[str, ...] = ("eager",)  # eager and/or compile
    sdpa: bool = False  # time once per SDPA backend
    params: dict = field(default_factory=dict)

    @property
    def tf32(self) -> bool:
        """Whether the case runs with TF32 allowed for matmuls and convolutions."""
        return self.dtype == "tf32"


def tf32_flags(on: bool) -> tuple[bool, bool]:
    """Set PyTorch's TF32 flags (matmul, cuDNN) and return the previous values. Off for matmuls is
    PyTorch's default, cuDNN's default is on; a tf32 case turns both on."""
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = True
    return old


def restore_tf32(old: tuple[bool, bool]) -> None:
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


# ---- SDPA -----------------------------------------------------------------------------------------


class SDPA(nn.Module):
    def __init__(self, causal: bool, gqa: bool):
        super().__init__()
        self.causal, self.gqa = causal, gqa

    def forward(self, q, k, v, mask=None):
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=self.causal, enable_gqa=self.gqa
        )


# (name, batch, query heads, kv heads, query length, kv length, head dim)
SDPA_SHAPES = (
    ("prefill_1x32x4096x128", 1, 32, 32, 4096, 4096, 128),
    ("prefill_4x16x1024x64", 4, 16, 16, 1024, 1024, 64),
    ("prefill_gqa_1x32kv8x4096x128", 1, 32, 8, 4096, 4096, 128),
    ("decode_8x32x1_kv8192x128", 8, 32, 32, 1, 8192, 128),
    ("decode_gqa_8x32kv8x1_kv8192x128", 8, 32, 8, 1, 8192, 128),
)
MASKS = ("none", "causal", "bool", "additive")


def _sdpa(shape: tuple, dtype: str, mask: str) -> Case:
    name, b, hq, hkv, lq, lk, d = shape
    t = DTYPES[dtype]

    def build():
        q = torch.randn(b, hq, lq, d, dtype=t)
        k = torch.randn(b, hkv, lk, d, dtype=t)
        v = torch.randn(b, hkv, lk, d, dtype=t)
        inputs = [q, k, v]
        if mask == "bool":
            inputs.append(torch.rand(b, 1, lq, lk) < 0.9)
        elif mask == "additive":
            inputs.append(torch.randn(b, 1, lq, lk, dtype=t))
        return SDPA(mask == "causal", hq != hkv), inputs

    compiled = dtype == "bf16" and mask in ("none", "causal") and hq == hkv and name != SDPA_SHAPES[1][0]
    modes = ("eager", "compile") if compiled else ("eager",)
    return Case(
        f"sdpa_{name}_{dtype}_{mask}", "sdpa", dtype, build, modes, sdpa=True,
        params={"shape": name, "mask": mask},
    )


# ---- dense layers, norms, activations -------------------------------------------------------------


class Linear(nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.lin = nn.Linear(k, n, bias=True)

    def forward(self, x):
        return self.lin(x)


class Apply(nn.Module):
    """A module around one functional op (`fn(x)`) with optional parameters."""

    def __init__(self, fn: Callable, module: nn.Module | None = None):
        super().__init__()
        self.fn, self.inner = fn, module

    def forward(self, x):
        return self.fn(x) if self.inner is None else self.inner(x)


def _module_case(name: str, category: str, dtype: str, make: Callable, shape: tuple) -> Case:
    """A one-module case; bf16 ones are also timed under torch.compile (one per op is enough to see
    whether a generated kernel beats a bound that the eager kernel does not)."""
    t = DTYPES[dtype]

    def build():
        return make().to(t), [torch.randn(*shape, dtype=t)]

    modes = ("eager", "compile") if dtype == "bf16" and "16x4096" not in name else ("eager",)
    return Case(name, category, dtype, build, modes)


def _dense_cases() -> list[Case]:
    out: list[Case] = []
    for dtype in ("bf16", "fp16"):
        for m in (8192, 16):
            out.append(_module_case(f"linear_bias_{m}x4096x4096_{dtype}", "linear", dtype,
                                    lambda: Linear(4096, 4096), (m, 4096)))
    for dtype in ("bf16", "fp16", "fp32"):
        out.append(_module_case(f"layer_norm_8192x4096_{dtype}", "norm", dtype,
                                lambda: Apply(None, nn.LayerNorm(4096)), (8192, 4096)))
        out.append(_module_case(f"rms_norm_8192x4096_{dtype}", "norm", dtype,
                                lambda: Apply(None, nn.RMSNorm(4096)), (8192, 4096)))
        out.append(_module_case(f"group_norm_32x256x56x56_{dtype}", "norm", dtype,
                                lambda: Apply(None, nn.GroupNorm(32, 256)), (32, 256, 56, 56)))
        out.append(_module_case(f"softmax_8192x8192_{dtype}", "softmax", dtype,
                                lambda: Apply(lambda x: F.softmax(x, dim=-1)), (8192, 8192)))
        out.append(_module_case(f"log_softmax_8192x8192_{dtype}", "softmax", dtype,
                                lambda: Apply(lambda x: F.log_softmax(x, dim=-1)), (8192, 8192)))
        out.append(_module_case(f"gelu_16Mx4_{dtype}", "gelu", dtype,
                                lambda: Apply(F.gelu), (16384, 4096)))
        out.append(_module_case(f"gelu_tanh_16Mx4_{dtype}", "gelu", dtype,
                                lambda: Apply(lambda x: F.gelu(x, approximate="tanh")), (16384, 4096)))
    for dtype in ("bf16", "fp16"):
        out.append(_cross_entropy(dtype))
    return out


class CrossEntropy(nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


def _cross_entropy(dtype: str) -> Case:
    t = DTYPES[dtype]

    def build():
        return CrossEntropy(), [torch.randn(8192, 32000, dtype=t), torch.randint(0, 32000, (8192,))]

    modes = ("eager", "compile") if dtype == "bf16" else ("eager",)
    return Case(f"cross_entropy_8192x32000_{dtype}", "softmax", dtype, build, modes)


# ---- convolutions, channels-last ------------------------------------------------------------------


class Conv(nn.Module):
    def __init__(self, conv: nn.Module, memory_format):
        super().__init__()
        self.conv, self.memory_format = conv, memory_format

    def forward(self, x):
        return self.conv(x)


def _conv(name: str, dtype: str, conv: Callable, shape: tuple, fmt) -> Case:
    t = DTYPES[dtype]

    def build():
        model = conv().to(t).to(memory_format=fmt)
        return model, [torch.randn(*shape, dtype=t).to(memory_format=fmt)]

    modes = ("eager", "compile") if dtype == "bf16" and "k3" in name and "conv2d" in name else ("eager",)
    return Case(name, "conv", dtype, build, modes)


def _conv_cases() -> list[Case]:
    out = []
    for dtype in ("bf16", "fp16"):
        out.append(_conv(f"conv2d_cl_32x64x56x56_k3_{dtype}", dtype,
                         lambda: nn.Conv2d(64, 64, 3, padding=1), (32, 64, 56, 56), torch.channels_last))
        out.append(_conv(f"conv2d_cl_32x256x28x28_k1_{dtype}", dtype,
                         lambda: nn.Conv2d(256, 512, 1), (32, 256, 28, 28), torch.channels_last))
        out.append(_conv(f"conv3d_cl_4x32x32x64x64_k3_{dtype}", dtype,
                         lambda: nn.Conv3d(32, 32, 3, padding=1), (4, 32, 32, 64, 64),
                         torch.channels_last_3d))
    return out


# ---- aliasing and zero-kernel programs ------------------------------------------------------------


class Identity(nn.Module):
    def forward(self, x):
        return x


class InPlaceMul(nn.Module):
    def forward(self, x):
        x.mul_(2)
        return x


class InPlaceAddReturnOther(nn.Module):
    def forward(self, x, y):
        x.add_(y)
        return y * 2


class ViewOut(nn.Module):
    def forward(self, x):
        return x.view(-1, 1024)


class SliceOut(nn.Module):
    def forward(self, x):
        return x[:, : x.shape[1] // 2]


class ListOut(nn.Module):
    def forward(self, x):
        return [x, x + 1]


class AliasPair(nn.Module):
    def forward(self, x):
        y = x + 1
        return x, y


def _alias(name: str, module: type, shapes: list[tuple]) -> Case:
    def build():
        return module(), [torch.randn(*s) for s in shapes]

    return Case(name, "alias", "fp32", build)


GIB_F32 = (16384, 16384)  # 1 GiB of fp32


class SliceInPlace(nn.Module):
    """An in-place update of a slice of an input: eager touches only the slice."""

    def forward(self, x):
        x[:, :16].mul_(2)
        return x


class IndexCopyInPlace(nn.Module):
    def forward(self, x, idx, src):
        x.index_copy_(0, idx, src)
        return x


def _index_copy_case() -> Case:
    def build():
        x = torch.randn(*GIB_F32)
        return IndexCopyInPlace(), [x, torch.tensor([3, 100, 2000]), torch.randn(3, GIB_F32[1])]

    return Case("index_copy_inplace_1GiB", "alias", "fp32", build)


class StaticCacheDecode(nn.Module):
    """One decode step with a static KV cache (as HF StaticCache does it): the new key and value
    rows are written into the cache buffers in place, then attention reads the whole cache."""

    def __init__(self, batch: int, heads: int, context: int, dim: int, dtype):
        super().__init__()
        self.register_buffer("k", torch.zeros(batch, heads, context, dim, dtype=dtype))
        self.register_buffer("v", torch.zeros(batch, heads, context, dim, dtype=dtype))

    def forward(self, q, k_new, v_new, pos):
        self.k.index_copy_(2, pos, k_new)
        self.v.index_copy_(2, pos, v_new)
        return F.scaled_dot_product_attention(q, self.k, self.v)


def _kv_decode(batch: int, heads: int, context: int, dim: int, dtype: str) -> Case:
    t = DTYPES[dtype]

    def build():
        q = torch.randn(batch, heads, 1, dim, dtype=t)
        inputs = [q, torch.randn_like(q), torch.randn_like(q), torch.tensor([context // 2])]
        return StaticCacheDecode(batch, heads, context, dim, t), inputs

    return Case(f"kvcache_decode_{batch}x{heads}x{context}x{dim}_{dtype}", "kvcache", dtype, build)


def _alias_cases() -> list[Case]:
    return [
        _alias("identity_1GiB", Identity, [GIB_F32]),
        _alias("inplace_mul_1GiB", InPlaceMul, [GIB_F32]),
        _alias("inplace_add_return_other_1GiB", InPlaceAddReturnOther, [GIB_F32, GIB_F32]),
        _alias("view_out_1GiB", ViewOut, [GIB_F32]),
        _alias("slice_out_1GiB", SliceOut, [GIB_F32]),
        _alias("list_out_1GiB", ListOut, [GIB_F32]),
        _alias("alias_pair_1GiB", AliasPair, [GIB_F32]),
        _alias("slice_inplace_1GiB", SliceInPlace, [GIB_F32]),
        _index_copy_case(),
        _kv_decode(8, 32, 8192, 128, "bf16"),
        _kv_decode(1, 8, 32768, 128, "fp16"),
    ]


# ---- a real model ---------------------------------------------------------------------------------


def _llama_layer(seq: int) -> Case:
    """One Llama-shaped decoder layer from HF transformers (bf16, SDPA attention): hidden 4096,
    32 heads, MLP 11008."""

    def build():
        from solar.frontends.torch.libraries import prepare_torchvision

        prepare_torchvision()  # a CPU torch beside PyPI's torchvision (README): before transformers
        from transformers import LlamaConfig, LlamaModel

        cfg = LlamaConfig(
            hidden_size=4096, intermediate_size=11008, num_hidden_layers=1,
            num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
            max_position_embeddings=seq, attn_implementation="sdpa",
        )
        model = LlamaModel(cfg).to(torch.bfloat16).eval()
        return _HFWrap(model), [torch.randint(0, 32000, (1, seq))]

    return Case(f"hf_llama_1layer_seq{seq}_bf16", "model", "bf16", build)


class _HFWrap(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, use_cache=False).last_hidden_state


def all_cases() -> list[Case]:
    sdpa = [_sdpa(s, dt, m) for s in SDPA_SHAPES for dt in DTYPES for m in MASKS]
    return sdpa + _dense_cases() + _conv_cases() + _alias_cases() + [_llama_layer(16384)]


CASES = all_cases()
BY_NAME = {c.name: c for c in CASES}
