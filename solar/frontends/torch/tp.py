"""Tensor parallelism of an `hf:` model, as Megatron-style layers place it: rank 0's share of the
model traced under a fake process group of `tp` ranks.

- attention: heads split over the ranks (q, k, v column-parallel; key/value heads split when there
  are at least `tp` of them, else each rank keeps one); the MLP's intermediate size split (gate and
  up column-parallel);
- row-parallel layers (every linear that maps a split size back to the hidden size: o_proj,
  down_proj) all-reduce their partial sums;
- the output head column-parallel over the vocabulary, its logits all-gathered; the embedding, the
  norms and the residual stream replicated;
- with sequence parallelism, the residual stream, norms and dropout split along the sequence: each
  row-parallel all-reduce becomes a reduce-scatter along the sequence, and the input of each block
  that holds a row-parallel linear (attention, MLP) and of the output head is all-gathered;
- mixture-of-experts layers: the experts placed over expert-parallel ranks (solar.frontends.torch.ep),
  the dense MLPs (shared experts, dense layers) split like the MLP above."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from solar.errors import UsageError
from solar.frontends.loaded import Loaded
from solar.frontends.torch.ep import ExpertParallel, expert_count

# Names of the row-parallel linears of transformers' decoders (their input is the split size even
# where it happens to equal the hidden size).
ROW_PARALLEL = ("o_proj", "down_proj", "out_proj", "dense_4h_to_h", "fc2", "w2", "wo")
# The row-parallel linears of MLPs, whose sibling linears of the split size are column-parallel (the
# MLPs of mixture-of-experts models, sized by fields other than intermediate_size, split in place).
MLP_ROW_PARALLEL = ("down_proj", "dense_4h_to_h", "fc2", "w2")


class _AllReduce(torch.nn.Module):
    """A row-parallel layer: the wrapped linear's partial sums, all-reduced over the ranks."""

    def __init__(self, inner: torch.nn.Module, group: Any) -> None:
        super().__init__()
        self.inner, self.group = inner, group

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return funcol.all_reduce(self.inner(x), "sum", self.group)


class _ReduceScatter(torch.nn.Module):
    """A row-parallel layer under sequence parallelism: its partial sums reduce-scattered along the
    sequence (dim 1)."""

    def __init__(self, inner: torch.nn.Module, group: Any) -> None:
        super().__init__()
        self.inner, self.group = inner, group

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return funcol.reduce_scatter_tensor(self.inner(x).contiguous(), "sum", 1, self.group)


class _GatherSequence(torch.nn.Module):
    """A block under sequence parallelism: its hidden states (the first argument or `hidden_states`)
    all-gathered along the sequence (dim 1) before it runs."""

    def __init__(self, inner: torch.nn.Module, group: Any) -> None:
        super().__init__()
        self.inner, self.group = inner, group

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if "hidden_states" in kwargs:
            kwargs["hidden_states"] = self._gather(kwargs["hidden_states"])
        else:
            args = (self._gather(args[0]), *args[1:])
        return self.inner(*args, **kwargs)

    def _gather(self, x: torch.Tensor) -> torch.Tensor:
        return funcol.all_gather_tensor(x.contiguous(), 1, self.group)


class _ScatterSequence(torch.nn.Module):
    """The first decoder layer under sequence parallelism: it takes rank 0's chunk of the sequence
    of the replicated embedding (a slice: no traffic)."""

    def __init__(self, inner: torch.nn.Module, ranks: int) -> None:
        super().__init__()
        self.inner, self.ranks = inner, ranks

    def forward(self, x: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        return self.inner(x[:, : x.shape[1] // self.ranks], *args, **kwargs)


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
    """The `hf.SHARDING` of `tp` ranks (docs/BOUNDS.md, Several GPUs: what each rank computes), with
    `ep` expert-parallel ranks for mixture-of-experts layers whose step brings `tokens` token rows to
    each replica, and sequence parallelism (`sp`)."""

    def __init__(self, spec: str, tp: int, ep: int = 1, sp: bool = False, tokens: int = 0) -> None:
        self.spec, self.tp, self.ep, self.sp, self.tokens = spec, tp, ep, sp, tokens
        self.hidden = 0
        self.group: Any = None  # ranks 0..tp-1 (rank 0's tensor-parallel group), made on first use
        self.experts: ExpertParallel | None = None

    def config(self, config: Any) -> None:
        tp, spec = self.tp, self.spec
        moe = expert_count(config) > 0
        if self.ep > 1 or (moe and tp > 1):
            if self.sp and moe:
                raise UsageError(f"hf:{spec}: --sp with mixture-of-experts layers is not supported; drop --sp")
            self.experts = ExpertParallel(spec, self.ep, self.tokens, 1 if self.sp else tp)
            self.experts.check(config)
        heads = config.num_attention_heads
        kv = getattr(config, "num_key_value_heads", None) or heads
        inter = getattr(config, "intermediate_size", None)
        if moe:  # the MLPs are split in place (module), whatever field sizes them
            inter = tp
        if heads % tp or (kv % tp and tp % kv) or inter is None or inter % tp:
            raise UsageError(
                f"hf:{spec}: --tp {tp} must divide the attention heads ({heads}) and the intermediate size "
                f"({inter}), and divide or be a multiple of the key/value heads ({kv})"
            )
        config.head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
        config.num_attention_heads = heads // tp
        config.num_key_value_heads = max(1, kv // tp)
        if not moe:
            config.intermediate_size = inter // tp
        self.hidden = config.hidden_size

    def module(self, lm: torch.nn.Module) -> torch.nn.Module:
        if self.group is None and self.tp > 1:
            whole = dist.get_world_size() == self.tp
            self.group = dist.group.WORLD if whole else dist.new_group(ranks=list(range(self.tp)))
        if self.experts is not None:
            lm = self.experts.module(lm, self.group)
        if self.tp == 1:
            return lm
        head_dim = lm.config.head_dim
        across = [n for n, m in lm.named_modules() if n.rpartition(".")[2] in ("q_norm", "k_norm")
                  and getattr(getattr(m, "weight", None), "shape", (0,))[0] > head_dim]
        if across:
            raise UsageError(f"hf:{self.spec}: --tp splits the heads, but {across[0]} normalises across all heads; use --tp 1")
        if self.experts is not None:
            self._split_mlps(lm)
        rows = [
            name for name, m in lm.named_modules()
            if isinstance(m, torch.nn.Linear) and m.out_features == self.hidden
            and (m.in_features != self.hidden or name.rpartition(".")[2] in ROW_PARALLEL)
        ]
        wrap = _ReduceScatter if self.sp else _AllReduce
        blocks = []
        for name in rows:
            owner, _, leaf = name.rpartition(".")
            parent = lm.get_submodule(owner)
            setattr(parent, leaf, wrap(getattr(parent, leaf), self.group))
            blocks.append(owner)
        if self.sp:
            for owner in blocks:  # attention and MLP blocks take the whole sequence
                holder, _, leaf = owner.rpartition(".")
                parent = lm.get_submodule(holder)
                setattr(parent, leaf, _GatherSequence(getattr(parent, leaf), self.group))
            layers = _decoder_layers(lm)
            if layers is None:
                raise UsageError(f"hf:{self.spec}: --sp needs the decoder layers as one list")
            if len(layers):
                layers[0] = _ScatterSequence(layers[0], self.tp)
        head = lm.get_output_embeddings()
        if isinstance(head, torch.nn.Linear):
            local = torch.nn.Linear(
                head.in_features, math.ceil(head.out_features / self.tp), bias=head.bias is not None,
                dtype=head.weight.dtype,
            )
            gathered = _GatherLast(local, self.group)
            split = self.sp and len(_decoder_layers(lm) or ())  # a model built with no layer is not split
            lm.set_output_embeddings(_GatherSequence(gathered, self.group) if split else gathered)
        return lm

    def _split_mlps(self, lm: torch.nn.Module) -> None:
        """Split each MLP (outside the experts) in place: its row-parallel linear by input, its
        sibling linears of that size by output."""
        for name, m in list(lm.named_modules()):
            owner, _, leaf = name.rpartition(".")
            if not (isinstance(m, torch.nn.Linear) and leaf in MLP_ROW_PARALLEL and m.out_features == self.hidden):
                continue
            parent, size = lm.get_submodule(owner), m.in_features
            if size % self.tp:
                raise UsageError(f"hf:{self.spec}: --tp {self.tp} must divide the MLP size {size} of {name}")
            for sib_name, sib in list(parent.named_children()):
                if isinstance(sib, torch.nn.Linear) and sib is not m and sib.out_features == size:
                    setattr(parent, sib_name, _linear(sib.in_features, size // self.tp, sib))
            setattr(parent, leaf, _linear(size // self.tp, m.out_features, m))


def _decoder_layers(lm: torch.nn.Module) -> torch.nn.ModuleList | None:
    """The list of the config's num_hidden_layers decoder layers (None: no single such list)."""
    layers = lm.config.num_hidden_layers
    found = [m for m in lm.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == layers]
    return found[0] if len(found) == 1 else None


def _linear(inputs: int, outputs: int, like: torch.nn.Linear) -> torch.nn.Linear:
    return torch.nn.Linear(inputs, outputs, bias=like.bias is not None, dtype=like.weight.dtype)


def load_hf_tp(spec: str, step: Any, tp: int, dp: int = 1, ep: int = 1, sp: bool = False) -> Loaded:
    """Rank 0's program of the `hf:` step under tensor parallelism of degree `tp` and `dp` data
    parallel replicas (each serving batch / dp sequences; ranks k*tp .. k*tp+tp-1 form replica k),
    `ep` expert-parallel ranks (consecutive) and sequence parallelism (`sp`)."""
    from dataclasses import replace

    from solar.frontends.select import load_hf
    from solar.frontends.torch.distributed import fake_world
    from solar.frontends.torch.hf import SHARDING

    if step.batch % dp:
        raise UsageError(f"--dp {dp} must divide the batch ({step.batch}): each replica serves batch / dp sequences")
    check_degrees(tp, dp, ep, sp, step.seq)
    name = spec.removeprefix("hf:")
    sharding = TensorParallel(name, tp, ep, sp, step.batch // dp * step.seq)
    token = SHARDING.set(sharding)
    try:
        with fake_world(tp * dp):
            loaded = load_hf(spec, replace(step, batch=step.batch // dp))
    finally:
        SHARDING.reset(token)
    line = f"tensor parallel: rank 0 of {tp} (Megatron column/row split, logits all-gathered)"
    if sp:
        line += "; sequence parallel (norms and residual on 1/tp of the sequence)"
    if dp > 1:
        line += f"; {dp} data-parallel replicas of batch {step.batch // dp}"
    extra = sharding.experts.notes if sharding.experts else ()
    notes = (*loaded.notes, line, *extra)
    return Loaded(loaded.program, loaded.flags, loaded.source_file, loaded.traced, notes, serving=loaded.serving)


def check_degrees(tp: int, dp: int, ep: int, sp: bool, seq: int) -> None:
    """The parallel degrees fit together: expert-parallel groups tile the tp x dp ranks; sequence
    parallelism splits the new tokens of each sequence over the tensor-parallel ranks."""
    if (tp * dp) % ep:
        raise UsageError(f"--ep {ep} must divide the tp x dp = {tp * dp} ranks (expert-parallel groups of consecutive ranks)")
    if sp and tp == 1:
        raise UsageError("--sp splits the sequence over the tensor-parallel ranks; give --tp 2 or more")
    if sp and seq % tp:
        raise UsageError(f"--sp needs --tp {tp} to divide the new tokens per sequence ({seq}); a decode step has one")
