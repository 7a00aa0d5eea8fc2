"""Pipeline parallelism of an `hf:` model: each stage's program (its consecutive decoder layers, the
first stage with the embedding, the last with the final norm and the output head), traced under the
tensor parallelism of its ranks; a later stage takes its input hidden states as received, an earlier
one outputs the hidden states it sends on."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from solar.errors import UsageError
from solar.frontends.loaded import Loaded
from solar.frontends.select import load_hf
from solar.frontends.torch.distributed import fake_world
from solar.frontends.torch.hf import SHARDING, read_config, scenario
from solar.frontends.torch.tp import TensorParallel, check_degrees

__all__ = ["PipelineStage", "Stage", "dense_layers", "layer_kinds", "load_hf_stages", "restage", "scenario", "stage_layers"]

FINAL_NORMS = ("norm", "final_layernorm", "ln_f", "norm_f")


def stage_layers(layers: int, stages: int) -> tuple[int, ...]:
    """Decoder layers of each stage: `layers` split as evenly as they go, the earlier stages taking
    the remainder."""
    return tuple(layers // stages + (s < layers % stages) for s in range(stages))


def dense_layers(config: Any, layers: int) -> frozenset[int]:
    """The decoder layers (model indices) whose MLP is dense in a model that mixes dense and
    mixture-of-experts layers: the first `first_k_dense_replace` (DeepSeek), those in
    `mlp_only_layers` and those off the `decoder_sparse_step` (Qwen MoE)."""
    dense = set(range(min(layers, getattr(config, "first_k_dense_replace", None) or 0)))
    dense |= {i for i in getattr(config, "mlp_only_layers", None) or () if 0 <= i < layers}
    step = getattr(config, "decoder_sparse_step", None) or 1
    dense |= {i for i in range(layers) if (i + 1) % step}
    return frozenset(dense)


def layer_kinds(config: Any) -> tuple[tuple[str, bool], ...]:
    """Per decoder layer of the model: its attention kind (`layer_types`) and whether its MLP is dense
    (dense_layers); stages whose layers agree on these are built alike."""
    total = config.num_hidden_layers
    types = tuple(getattr(config, "layer_types", None) or ("",) * total)
    dense = dense_layers(config, total)
    return tuple((types[i], i in dense) for i in range(total))


def restage(config: Any, first: int, layers: int) -> None:
    """Make the per-layer fields of `config` (whose num_hidden_layers is already the stage's) say
    which of the stage's layers are dense, as the model's layers first .. first + layers - 1 are."""
    total = first + layers
    fields = ("first_k_dense_replace", "mlp_only_layers", "decoder_sparse_step")
    if not any(getattr(config, f, None) for f in fields):
        return
    dense = dense_layers(config, max(total, first + 1))
    if getattr(config, "first_k_dense_replace", None) is not None:
        config.first_k_dense_replace = max(0, config.first_k_dense_replace - first)
    elif getattr(config, "decoder_sparse_step", None) is not None or getattr(config, "mlp_only_layers", None):
        config.decoder_sparse_step = 1
        config.mlp_only_layers = [j for j in range(layers) if first + j in dense]


class _Received(torch.nn.Module):
    """The embedding of a later stage: the hidden states received from the stage before (a buffer
    of the micro-batch's shape, read once), whatever the token ids."""

    def __init__(self, shape: tuple[int, ...], dtype: torch.dtype) -> None:
        super().__init__()
        self.register_buffer("received", torch.zeros(shape, dtype=dtype))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.received


class PipelineStage:
    """The `hf.SHARDING` of one pipeline stage: `layers` decoder layers under `tensor`'s split."""

    def __init__(
        self, tensor: TensorParallel, first: bool, last: bool, layers: tuple[int, int], tokens: tuple[int, int]
    ) -> None:
        self.tensor, self.first, self.last = tensor, first, last
        self.first_layer, self.stage_layers = layers  # the model's index of the stage's first layer; how many
        self.tokens = tokens

    def config(self, config: Any) -> None:
        restage(config, self.first_layer, config.num_hidden_layers)
        self.tensor.config(config)

    def module(self, lm: torch.nn.Module) -> torch.nn.Module:
        base = lm.base_model
        if not self.last:
            norm = next((n for n in FINAL_NORMS if isinstance(getattr(base, n, None), torch.nn.Module)), None)
            if norm is None:
                raise UsageError(f"hf:{self.tensor.spec}: --pp needs a decoder whose final norm is one of {', '.join(FINAL_NORMS)}")
            setattr(base, norm, torch.nn.Identity())
            lm.set_output_embeddings(torch.nn.Identity())
        if not self.first:
            embed = lm.get_input_embeddings()
            shape = (*self.tokens, self.tensor.hidden)
            lm.set_input_embeddings(_Received(shape, embed.weight.dtype))
        return self.tensor.module(lm)


@dataclass(frozen=True, slots=True)
class Stage:
    """Pipeline stage `index` of `stages`: its decoder layers and rank 0's program of its tensor-
    parallel group (the program of a stage of the same kind and size where one was traced)."""

    index: int
    stages: int
    layers: int
    loaded: Loaded


def load_hf_stages(
    spec: str, step: Any, tp: int, pp: int, dp: int = 1, microbatches: int = 1, ep: int = 1, sp: bool = False
) -> tuple[Stage, ...]:
    """The `pp` stages of the `hf:` step under tensor parallelism `tp` within each stage and `dp`
    replicas, each stage running one micro-batch of batch / (dp * microbatches) sequences; `ep`
    expert-parallel ranks and sequence parallelism (`sp`) as in solar.frontends.torch.tp."""
    if step.batch % (dp * microbatches):
        raise UsageError(
            f"--dp {dp} x --microbatches {microbatches} must divide the batch ({step.batch}): each micro-batch "
            "is batch / (dp x microbatches) sequences"
        )
    name = spec.removeprefix("hf:")
    config = read_config(name)
    total = config.num_hidden_layers
    if pp > total:
        raise UsageError(f"hf:{name}: --pp {pp} exceeds the {total} decoder layers; give at most {total} stages")
    micro = replace(step, batch=step.batch // (dp * microbatches))
    check_degrees(tp, dp, ep, sp, step.seq)
    traced: dict[tuple, Loaded] = {}
    stages = []
    kinds = layer_kinds(config)
    split = stage_layers(total, pp)
    for s, layers in enumerate(split):
        start = sum(split[:s])
        key = (s == 0, s == pp - 1, layers, kinds[start : start + layers])  # stages of one kind share a trace
        if key not in traced:
            stage = PipelineStage(TensorParallel(name, tp, ep, sp, micro.batch * micro.seq), s == 0, s == pp - 1, (start, layers), (micro.batch, micro.seq))
            token = SHARDING.set(stage)
            try:
                with fake_world(tp * dp):
                    loaded = load_hf(spec, micro)
            finally:
                SHARDING.reset(token)
            line = (f"pipeline stage {s} of {pp}: {layers} decoder layers, micro-batch of {micro.batch}; "
                    f"tensor parallel: rank 0 of {tp}")
            experts = stage.tensor.experts.notes if stage.tensor.experts else ()
            traced[key] = Loaded(loaded.program, loaded.flags, loaded.source_file, loaded.traced,
                                 (*loaded.notes, line, *experts), serving=loaded.serving)
        stages.append(Stage(s, pp, layers, traced[key]))
    return tuple(stages)
