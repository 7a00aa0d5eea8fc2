"""Tensor parallelism of an `hf:` model, as Megatron-style layers place it: rank 0's share of the
model traced under a fake process group of `tp` ranks.

- attention: heads split over the ranks (q, k, v column-parallel; key/value heads split when there
  are at least `tp` of them, else each rank keeps one); the MLP's intermediate size split (gate and
  up column-parallel);
- row-parallel layers (every linear that maps a split size back to the hidden size: o_proj,
  down_proj) all-reduce their partial sums;
- the output head column-parallel over the vocabulary, its logits all-gathered; the embedding, the
  norms and the residual stream replicated."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from solar.errors import UsageError
from solar.frontends.loaded import Loaded

EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
# Names of the row-parallel linears of transformers' decoders (their input is the split size even
# where it happens to equal the hidden size).
ROW_PARALLEL = ("o_proj", "down_proj", "out_proj", "dense_4h_to_h", "fc2", "w2", "wo")


class _AllReduce(torch.nn.Module):
    """A row-parallel layer: the wrapped linear's partial sums, all-reduced over the ranks."""

    def __init__(self, inner: torch.nn.Module, group: Any) -> None:
        super().__init__()
        self.inner, self.group = inner, group

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return funcol.all_reduce(self.inner(x), "sum", self.group)


class _GatherLast(torch.nn.Module):
    """A column-parallel output head: this rank's slice of the logits, all-gathered along the
    vocabulary."""

    def __init__(self, inner: torch.nn.Module, group: Any) -> None:
        super().__init__()
        self.inner, self.group = inner, group

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ranks = dist.get_world_size(self.group)
        stacked = funcol.all_gather_single(self.inner(x).contiguous(), 0, self.group)  # [ranks * B, ...]
        return torch.cat(torch.chunk(stacked, ranks, dim=0), dim=-1)


class TensorParallel:
    """The `hf.SHARDING` of `tp` ranks (docs/BOUNDS.md, Several GPUs: what each rank computes)."""

    def __init__(self, spec: str, tp: int) -> None:
        self.spec, self.tp = spec, tp
        self.hidden = 0
        self.group: Any = None  # ranks 0..tp-1 (rank 0's tensor-parallel group), made on first use

    def config(self, config: Any) -> None:
        tp, spec = self.tp, self.spec
        if tp > 1 and any(getattr(config, k, None) for k in EXPERT_KEYS):
            raise UsageError(f"hf:{spec}: --tp of mixture-of-experts models is not supported yet")
        heads = config.num_attention_heads
        kv = getattr(config, "num_key_value_heads", None) or heads
        inter = getattr(config, "intermediate_size", None)
        if heads % tp or (kv % tp and tp % kv) or inter is None or inter % tp:
            raise UsageError(
                f"hf:{spec}: --tp {tp} must divide the attention heads ({heads}) and the intermediate size "
                f"({inter}), and divide or be a multiple of the key/value heads ({kv})"
            )
        config.head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        config.num_attention_heads = heads // tp
        config.num_key_value_heads = max(1, kv // tp)
        config.intermediate_size = inter // tp
        self.hidden = config.hidden_size

    def module(self, lm: torch.nn.Module) -> torch.nn.Module:
        if self.tp == 1:
            return lm
        if self.group is None:
            whole = dist.get_world_size() == self.tp
            self.group = dist.group.WORLD if whole else dist.new_group(ranks=list(range(self.tp)))
        rows = [
            name for name, m in lm.named_modules()
            if isinstance(m, torch.nn.Linear) and m.out_features == self.hidden
            and (m.in_features != self.hidden or name.rpartition(".")[2] in ROW_PARALLEL)
        ]
        for name in rows:
            owner, _, leaf = name.rpartition(".")
            parent = lm.get_submodule(owner)
            setattr(parent, leaf, _AllReduce(getattr(parent, leaf), self.group))
        head = lm.get_output_embeddings()
        if isinstance(head, torch.nn.Linear):
            local = torch.nn.Linear(
                head.in_features, math.ceil(head.out_features / self.tp), bias=head.bias is not None,
                dtype=head.weight.dtype,
            )
            lm.set_output_embeddings(_GatherLast(local, self.group))
        return lm


def load_hf_tp(spec: str, step: Any, tp: int, dp: int = 1) -> Loaded:
    """Rank 0's program of the `hf:` step under tensor parallelism of degree `tp` and `dp` data
    parallel replicas (each serving batch / dp sequences; ranks k*tp .. k*tp+tp-1 form replica k)."""
    from dataclasses import replace

    from solar.frontends.select import load_hf
    from solar.frontends.torch.distributed import fake_world
    from solar.frontends.torch.hf import SHARDING

    if step.batch % dp:
        raise UsageError(f"--dp {dp} must divide the batch ({step.batch}): each replica serves batch / dp sequences")
    name = spec.removeprefix("hf:")
    token = SHARDING.set(TensorParallel(name, tp))
    try:
        with fake_world(tp * dp):
            loaded = load_hf(spec, replace(step, batch=step.batch // dp))
    finally:
        SHARDING.reset(token)
    line = f"tensor parallel: rank 0 of {tp} (Megatron column/row split, logits all-gathered)"
    if dp > 1:
        line += f"; {dp} data-parallel replicas of batch {step.batch // dp}"
    notes = (*loaded.notes, line)
    return Loaded(loaded.program, loaded.flags, loaded.source_file, loaded.traced, notes, serving=loaded.serving)
