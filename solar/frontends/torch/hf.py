"""LLM serving scenarios from a Hugging Face config: `hf:<model id or config.json>`.

The causal LM is built from its config by `transformers` (no weights: construction runs under the
loader's `building()`, so parameters are unallocated) and wrapped in a module that runs one
serving step:

- prefill: S tokens of each of B sequences, written into an empty static KV cache of S rows;
- decode: one token of each of B sequences, attending a static KV cache of C tokens already
  present (C + 1 rows: the new token's key and value are written in place at row C).

The cache tensors are inputs of the step (two per layer, [B, heads, rows, dim], each layer's heads
and dims those the model writes: K and V heads of the config, or a compressed latent for
multi-head latent attention), handed to HF's own `StaticCache`, so the model's attention code is
what is analysed. Facts the report states (weight bytes, KV-cache bytes) come from the built
module and the config."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from solar.backends.levels import Level
from solar.bounded import loads_json
from solar.errors import UsageError
from solar.frontends.torch.loader import building
from solar.frontends.torch.signature import layer_signature

SCENARIOS = ("prefill", "decode")
# How each rank holds the model (solar.frontends.torch.tp), set around a load: `config(config)`
# edits the config before the model is built, `module(lm)` the built model; None: one GPU.
SHARDING: ContextVar[Any] = ContextVar("hf_sharding", default=None)
# Config fields the step needs (head_dim and num_key_value_heads have defaults).
REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


@dataclass(frozen=True)
class Scenario:
    """One serving step: `kind` (prefill | decode), batch, the new tokens per sequence (`seq`) and
    the cached tokens before the step (`context`)."""

    kind: str
    batch: int
    seq: int
    context: int = 0

    @property
    def cache_rows(self) -> int:
        return self.seq + self.context

    def describe(self) -> str:
        if self.kind == "prefill":
            return f"prefill of {self.seq} tokens x batch {self.batch} (static KV cache of {self.cache_rows} rows)"
        return (
            f"decode of {self.seq} token x batch {self.batch} with {self.context} cached tokens "
            f"(static KV cache of {self.cache_rows} rows)"
        )


@dataclass(frozen=True)
class Built:
    """The step module, its inputs, and what the report says about it."""

    name: str
    module: torch.nn.Module
    inputs: tuple
    scenario: Scenario
    weight_bytes: int
    kv_cache_bytes: int
    layers: int
    config: Any = None
    outline: bool = False  # built on the meta device (`outline`): its facts, not a module to trace

    def notes(self) -> tuple[str, ...]:
        return (
            f"HF scenario: {self.name}, {self.scenario.describe()}",
            f"weight bytes: {self.weight_bytes} (every parameter once, tied weights once)",
            f"KV-cache bytes: {self.kv_cache_bytes} (K and V of {self.layers} layers, static cache as inputs)",
        )


def scenario(kind: str | None, batch: int | None, seq: int | None, context: int | None) -> Scenario:
    """The step the CLI flags ask for; a missing or contradictory flag is one usage line."""
    if kind not in SCENARIOS:
        raise UsageError(f"an hf: model needs --scenario {' or '.join(SCENARIOS)}")
    batch = 1 if batch is None else batch
    if kind == "prefill":
        if seq is None or context:
            raise UsageError("--scenario prefill needs --seq S (the prompt length) and no --context")
        return Scenario("prefill", batch, seq, 0)
    if seq not in (None, 1):
        raise UsageError("--scenario decode runs one new token per sequence: leave --seq out (or 1)")
    if context is None:
        raise UsageError("--scenario decode needs --context C (the tokens already in the KV cache)")
    return Scenario("decode", batch, 1, context)


def read_config(spec: str) -> Any:
    """The transformers config named by `spec`: a config.json path (or a folder holding one), or a
    model id in the local HF cache (no network)."""
    from transformers import AutoConfig

    path = Path(spec)
    if path.is_dir():
        path = path / "config.json"
    if path.suffix == ".json" or path.exists():
        if not path.is_file():
            raise UsageError(f"hf:{spec}: no such config file")
        try:
            data = loads_json(path.read_text(), f"hf:{spec}", UsageError)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"hf:{spec}: not a JSON config ({type(exc).__name__}: {exc})") from None
        if not isinstance(data, dict):
            raise UsageError(f"hf:{spec}: a config.json holds an object, not a {type(data).__name__}")
        if "model_type" not in data:
            raise UsageError(f"hf:{spec}: the config has no model_type (e.g. \"llama\", \"mistral\")")
        from huggingface_hub.errors import StrictDataclassError
        from transformers import CONFIG_MAPPING

        if data["model_type"] not in CONFIG_MAPPING:
            raise UsageError(f"hf:{spec}: unknown model_type {data['model_type']!r} for transformers {_version()}")
        try:
            config = AutoConfig.for_model(**data)
        except (ValueError, KeyError, TypeError, StrictDataclassError) as exc:
            raise UsageError(f"hf:{spec}: a field of the config is invalid ({_line(exc)})") from None
        absent = [f for f in REQUIRED if not _given(f, data, config)]
        if absent:  # a default would silently stand in for the real model's value
            raise UsageError(f"hf:{spec}: the config lacks {', '.join(absent)}; a causal LM config needs {', '.join(REQUIRED)}")
    else:
        try:
            config = AutoConfig.from_pretrained(spec, local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            raise UsageError(
                f"hf:{spec}: not a config file and not a model id in the local HF cache "
                f"(no network is used; give a path to config.json) ({_line(exc)})"
            ) from None
    missing = [f for f in REQUIRED if getattr(config, f, None) is None]
    if missing:
        raise UsageError(f"hf:{spec}: the config lacks {', '.join(missing)}; a causal LM config needs {', '.join(REQUIRED)}")
    return config


def _given(field: str, data: dict, config: Any) -> bool:
    """The config file names `field`, itself or by its model's alias (GPT-2's n_embd)."""
    names = getattr(config, "attribute_map", {})
    aliases = [names[field]] if field in names else []
    return any(data.get(k) is not None for k in (field, *aliases))


def _sliding_window(config: Any) -> int | None:
    """The attention window of the config's sliding-window layers (None: every layer attends all)."""
    window = getattr(config, "sliding_window", None)
    types = getattr(config, "layer_types", None)
    if types is not None and "sliding_attention" not in types:
        return None
    if getattr(config, "use_sliding_window", True) is False:
        return None
    return window


def _version() -> str:
    import transformers

    return transformers.__version__


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _dtype(config: Any) -> torch.dtype:
    """The config's dtype (`dtype` or `torch_dtype`), bfloat16 when it names none."""
    value = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    if isinstance(value, torch.dtype):
        return value
    if isinstance(value, str) and isinstance(getattr(torch, value, None), torch.dtype):
        return getattr(torch, value)
    return torch.bfloat16


class _Step(torch.nn.Module):
    """One serving step of `lm` with the KV cache as inputs (key_0, value_0, key_1, ...)."""

    def __init__(self, lm: torch.nn.Module, step: Scenario) -> None:
        super().__init__()
        self.lm = lm
        self.context = step.context
        self.rows = step.cache_rows

    def forward(self, input_ids: torch.Tensor, *kv: torch.Tensor) -> torch.Tensor:
        from transformers import StaticCache

        cache = StaticCache(config=self.lm.config, max_cache_len=self.rows)
        for layer, keys, values in zip(cache.layers, kv[0::2], kv[1::2]):
            layer.max_batch_size, layer.num_heads = keys.shape[:2]
            layer.k_head_dim = keys.shape[-1]
            layer.v_head_dim = values.shape[-1]
            layer.dtype, layer.device = keys.dtype, keys.device
            layer.keys, layer.values = keys, values
            layer.cumulative_length = torch.tensor(self.context, dtype=torch.long)
            layer.is_initialized = True
        n = input_ids.shape[1]
        positions = torch.arange(self.context, self.context + n, device=input_ids.device)
        cached = _cache_arg(self.lm, cache)
        out = self.lm(input_ids=input_ids, cache_position=positions, use_cache=True, **cached)
        return out.logits


def _cache_arg(lm: torch.nn.Module, cache: Any) -> dict:
    """The cache as the model's keyword: `cache` (newer transformers models), else
    `past_key_values`."""
    import inspect

    key = "cache" if "cache" in inspect.signature(lm.forward).parameters else "past_key_values"
    return {key: cache}


# Layer kinds whose cache rows are the config's K/V heads x head_dim.
PLAIN_LAYER_TYPES = frozenset({"full_attention", "sliding_attention"})


def plain_attention(config: Any) -> bool:
    """Every layer caches K and V of num_key_value_heads x head_dim as the config states them: the
    config names no other attention dimension (an MLA latent rank, a V, rope or linear-attention
    head dim: any `*_head_dim` besides head_dim) and no layer kind beyond full or sliding attention."""
    fields = config.to_dict()
    other = [k for k in fields if (k.endswith("head_dim") and k != "head_dim") or "lora_rank" in k]
    kinds = fields.get("layer_types") or ()
    return not other and set(kinds) <= PLAIN_LAYER_TYPES


def _cache_rows(lm: torch.nn.Module, heads: int, head_dim: int) -> tuple:
    """Per layer, ((heads, dim) of its cached keys, (heads, dim) of its values), as the model writes
    them: for attention other than plain (plain_attention), one token of a fake step into an empty
    static cache (no data is read or allocated). Where the attention is plain or that step does not
    run, every layer's K and V are `heads` x `head_dim` (the config)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from transformers import StaticCache

    layers = lm.config.num_hidden_layers
    plain = (((heads, head_dim), (heads, head_dim)),) * layers
    if layers == 0 or plain_attention(lm.config):
        return plain
    cache = StaticCache(config=lm.config, max_cache_len=1)
    buffers = dict(lm.named_buffers())  # a rotary embedding may reassign its tables in forward
    try:
        with FakeTensorMode(allow_non_fake_inputs=True):
            ids = torch.zeros((1, 1), dtype=torch.long)
            positions = torch.arange(1)
            lm(input_ids=ids, cache_position=positions, use_cache=True, **_cache_arg(lm, cache))
    except Exception:  # noqa: BLE001  (the trace of the real step reports what fails)
        return plain
    finally:
        for name, buffer in buffers.items():
            owner, _, leaf = name.rpartition(".")
            setattr(lm.get_submodule(owner), leaf, buffer)
    written = [(layer.keys, layer.values) for layer in cache.layers]
    if len(written) != layers or any(k is None or v is None for k, v in written):
        return plain
    return tuple(((k.shape[1], k.shape[-1]), (v.shape[1], v.shape[-1])) for k, v in written)


def build(spec: str, step: Scenario, layers: int | None = None) -> Built:
    """The step module and its inputs for `hf:<spec>`, built with nothing large allocated;
    `layers` overrides the config's num_hidden_layers (the per-layer bound builds 0 and 1)."""
    config, shard, dtype = _config(spec, step, layers)
    layers = config.num_hidden_layers
    with building():
        lm = _from_config(spec, config, dtype).eval()
        if shard is not None:
            lm = shard.module(lm)
    rows = _cache_rows(lm, *_kv_shape(config))
    with building():
        return _built(spec, step, config, layers, lm, rows, dtype)


def outline(spec: str, step: Scenario) -> Built | None:
    """The step of `hf:<spec>` with its model built on the meta device: what `unshared` reads of the
    full model and the facts `build` states (layers, weight and KV-cache bytes), all of them
    shapes and dtypes, at a fraction of the cost of `build`; not a module to trace (`Built.outline`).
    None where those facts need more than shapes: a sharded model (its ranks edit the built model),
    attention other than plain (`plain_attention`: the rows each layer caches come from a forward
    step), or a construction that fails on the meta device (`build` then says what fails, if it does)."""
    config, shard, dtype = _config(spec, step, None)
    if shard is not None or not plain_attention(config):  # (checked again on the built model's config)
        return None
    layers = config.num_hidden_layers
    try:
        with torch.device("meta"):
            lm = _from_config(spec, config, dtype).eval()
    except Exception:  # noqa: BLE001  (a construction that reads a value, or no causal LM at all)
        return None
    if not plain_attention(lm.config):
        return None
    rows = _cache_rows(lm, *_kv_shape(config))  # plain: the config's rows, no forward step
    with torch.device("meta"):
        return replace(_built(spec, step, config, layers, lm, rows, dtype), outline=True)


def _config(spec: str, step: Scenario, layers: int | None) -> tuple[Any, Any, torch.dtype]:
    """The config `build` builds (its layer count and the sharding's edits applied), the sharding
    (None: one GPU) and the model's dtype; a sliding window shorter than the cache is a usage error."""
    config = read_config(spec)
    shard = SHARDING.get()
    first = getattr(shard, "first_layer", 0)  # a pipeline stage's decoder layers: first, and how many
    if layers is None:
        layers = getattr(shard, "stage_layers", None)
    if layers is not None:
        config.num_hidden_layers = layers
        if getattr(config, "layer_types", None):
            config.layer_types = config.layer_types[first : first + layers]
    if shard is not None:
        shard.config(config)
    window = _sliding_window(config)
    if window is not None and window < step.cache_rows:
        raise UsageError(
            f"hf:{spec}: sliding-window attention (window {window} < {step.cache_rows} cache rows) is not "
            "supported by hf: steps yet; use a context that fits the window"
        )
    return config, shard, _dtype(config)


def _kv_shape(config: Any) -> tuple[int, int]:
    """K/V heads and head dim as the config states them."""
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    return kv_heads, getattr(config, "head_dim", None) or config.hidden_size // heads


def _built(
    spec: str, step: Scenario, config: Any, layers: int, lm: torch.nn.Module, rows: tuple, dtype: torch.dtype
) -> Built:
    """The Built of model `lm` of `layers` decoder layers with per-layer cache `rows` (its KV cache
    and input ids are made in the caller's construction mode)."""
    kv = tuple(
        torch.zeros((step.batch, heads_, step.cache_rows, dim), dtype=dtype)
        for layer in rows
        for heads_, dim in layer
    )
    input_ids = torch.zeros((step.batch, step.seq), dtype=torch.long)
    unique = {id(p): p for p in lm.parameters()}.values()  # tied weights once
    weight_bytes = sum(p.numel() * p.element_size() for p in unique)
    kv_bytes = sum(t.numel() * t.element_size() for t in kv)
    name = f"{getattr(config, '_name_or_path', '') or Path(spec).stem} {step.kind}".strip()
    name = name.replace(" ", "_")
    return Built(name, _Step(lm, step), (input_ids, *kv), step, weight_bytes, kv_bytes, layers, config)


def _from_config(spec: str, config: Any, dtype: torch.dtype) -> torch.nn.Module:
    """The causal LM of `config`, its attention through SDPA, or eager (transformers' default
    without SDPA) where the model has no SDPA path (GPT-OSS: attention sinks)."""
    from transformers import AutoModelForCausalLM

    try:
        try:
            return AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa")
        except ValueError as exc:
            if "scaled_dot_product_attention" not in str(exc):
                raise
            return AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="eager")
    except ValueError as exc:
        raise UsageError(f"hf:{spec}: {config.model_type!r} is not a causal LM transformers can build ({_line(exc)})") from None


def layer_list(built: Built) -> tuple[str, torch.nn.ModuleList] | None:
    """The decoder layers of a built step: the module path under which the traced program names
    them (`lm.model.layers`) and the list (None where no ModuleList holds num_hidden_layers)."""
    found = [
        (name, mod) for name, mod in built.module.named_modules()
        if isinstance(mod, torch.nn.ModuleList) and len(mod) == built.layers
    ]
    return found[0] if len(found) == 1 else None


def unshared(full: Built, small: Built) -> str | None:
    """Why the step `full` may not be stitched from `small` (the same step built with fewer
    layers; solar.frontends.torch.stitch), or None where it may: no two layers share a parameter,
    every layer but the first is the same module up to renaming (class, parameter and buffer
    shapes and dtypes, attributes),
    the per-layer config lists agree on them, and `small`'s layers are those of `full`."""
    lists = [layer_list(b) for b in (full, small)]
    if None in lists or lists[0][0] != lists[1][0]:
        return "no single list of the config's num_hidden_layers decoder layers found"
    big, few = lists[0][1], lists[1][1]
    for key, value in vars(full.config).items():
        if isinstance(value, (list, tuple)) and len(value) == full.layers and len(set(map(repr, value[1:]))) > 1:
            return f"the config's per-layer {key} differs between layers"
    owners: dict[int, int] = {}
    for k, layer in enumerate(big):
        for t in (*layer.parameters(), *layer.buffers()):
            if owners.setdefault(id(t), k) != k:
                return f"decoder layers {owners[id(t)]} and {k} share a parameter or buffer"
    one = layer_signature(big[1], full.config)
    for k in range(2, len(big)):
        if layer_signature(big[k], full.config) != one:
            return f"decoder layer {k} differs from layer 1 (class, parameter shapes or attributes)"
    head = layer_signature(few[0], small.config) != layer_signature(big[0], full.config)
    if head or any(layer_signature(m, small.config) != one for m in few[1:]):
        return "the layers of the shortened model differ from the full model's"
    return None


# Levels whose time is not the max of their terms but is built over the ops in program order (a sum
# of per-op times, a stream of kernels, the host-device pipeline): a layer's share is the difference.
IN_ORDER = frozenset({Level.UNFUSED, Level.GRAPHED, Level.EAGER_HOST})


def per_layer(bounds0: dict, bounds1: dict) -> dict[str, dict[str, float]]:
    """One decoder layer's bound at each level, from the bounds of the same step built with 0 and
    with 1 layer (the layers of these configs are identical): a fused level is the max of its
    terms' differences (each term is a sum over the program's ops, so the difference is exactly
    the layer's share), a level built over the ops in program order (unfused, graphed,
    eager_host: `IN_ORDER`) the difference of its times: what the layer adds to the step."""
    out = {}
    for level, b1 in bounds1.items():
        if level not in bounds0:  # a level only a layer has (MoE's cumsum makes a recurrence)
            continue
        b0 = bounds0[level]
        terms = {
            "compute_seconds": b1.compute_seconds - b0.compute_seconds,
            "memory_seconds": b1.memory_seconds - b0.memory_seconds,
            "launch_seconds": b1.launch_seconds - b0.launch_seconds,
        }
        if level in IN_ORDER:
            seconds = b1.seconds - b0.seconds
        else:
            seconds = max(terms.values())
        out[level] = {"seconds": seconds, **terms}
    return out
