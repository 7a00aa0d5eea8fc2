"""Expert parallelism of an `hf:` mixture-of-experts model: each rank of an expert-parallel group
of `ep` ranks holds E / ep experts, dispatches its tokens' routed rows to the experts' ranks with an
all-to-all and takes the results back with a second one (docs/BOUNDS.md §21, Expert parallelism).

Routing is data-dependent, so the rank program fixes one routing that bounds every other from
below: *balanced* (every rank's experts process the rows of as many tokens as it owns, T·k: the
busiest rank of any routing processes at least that mean) and *least traffic* (each token's k
distinct experts are local where they can be: E / ep of them, so max(0, k − E/ep) of its k rows
must leave, and as many arrive: the busiest receiver takes at least the mean). The program keeps
the model's own expert code (its gate, biases, activation) on the rows of its E / ep experts."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

from solar.errors import UsageError

EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
TOP_K_KEYS = ("num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k")


def expert_count(config: Any) -> int:
    """The routed experts of `config` (0: a dense model)."""
    return next((int(getattr(config, k)) for k in EXPERT_KEYS if getattr(config, k, None)), 0)


def top_k(config: Any) -> int:
    return next((int(getattr(config, k)) for k in TOP_K_KEYS if getattr(config, k, None)), 0)


def leaving_rows(tokens: int, k: int, experts: int, ep: int) -> int:
    """Rows of the least-traffic routing that leave a rank owning `tokens` tokens, per rank: each
    token's k distinct experts, E / ep of which are local."""
    return tokens * max(0, k - experts // ep)


def exchanged_rows(tokens: int, k: int, experts: int, ep: int) -> int:
    """Rows of the all-to-all buffer (ep equal chunks, one kept): (ep − 1) chunks carry at most the
    leaving rows, exactly where ep − 1 divides them."""
    if ep == 1:
        return 0
    return ep * (leaving_rows(tokens, k, experts, ep) // (ep - 1))


class _ExpertShard(torch.nn.Module):
    """A rank's experts module: the model's experts (E / ep of them) on the rows of the balanced,
    least-traffic routing; the rank's own tokens split off a tensor-parallel group's replicated
    ones first (`split` > 1) and all-gathered after."""

    def __init__(self, inner: torch.nn.Module, *, k: int, experts: int, ep: int, ep_group: Any,
                 split: int, tp_group: Any) -> None:
        super().__init__()
        self.inner, self.k, self.experts, self.ep, self.ep_group = inner, k, experts, ep, ep_group
        self.split, self.tp_group = split, tp_group

    def forward(self, hidden: torch.Tensor, index: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        k, split = self.k, self.split
        if hidden.shape[0] % split:  # a step of fewer tokens than ranks (the cache probe): unsplit
            split = 1
        own = hidden.shape[0] // split
        if split > 1:  # rank 0's share of the group's tokens (replicated: a slice, no traffic)
            hidden, index, weights = hidden[:own], index[:own], weights[:own]
        send = exchanged_rows(own, k, self.experts, self.ep)
        ids, perm = torch.sort(index.reshape(-1))
        rows = hidden[perm // k]  # [own * k, H]: this rank's routed rows, by expert
        row_weights = weights.reshape(-1)[perm]
        kept = own * k - send
        if send:
            arrived = funcol.all_to_all_single(rows[kept:].contiguous(), None, None, self.ep_group)
            rows = torch.cat((rows[:kept], arrived))
        local = (ids // self.ep).reshape(-1, 1)  # an id among the rank's E / ep experts
        out = self.inner(rows, local, row_weights.reshape(-1, 1).to(weights.dtype))  # [own * k, H]
        if send:
            back = funcol.all_to_all_single(out[kept:].contiguous(), None, None, self.ep_group)
            out = torch.cat((out[:kept], back))
        combined = torch.zeros((own, out.shape[-1]), dtype=out.dtype, device=out.device)
        combined = combined.index_add(0, perm // k, out)
        if split > 1:
            combined = funcol.all_gather_tensor(combined.contiguous(), 0, self.tp_group)
        return combined


def _shrink(experts: torch.nn.Module, total: int, local: int) -> None:
    """Keep `local` of the `total` experts: every parameter indexed by expert first."""
    for name, p in list(experts.named_parameters(recurse=False)):
        if p.dim() >= 1 and p.shape[0] == total:
            setattr(experts, name, torch.nn.Parameter(torch.empty((local, *p.shape[1:]), dtype=p.dtype),
                                                      requires_grad=False))
    experts.num_experts = local


class ExpertParallel:
    """Expert placement over `ep` ranks (groups of consecutive ranks) of a model whose token rows
    reach each MoE layer as `tokens` rows per rank (after a tensor-parallel split into `split`)."""

    def __init__(self, spec: str, ep: int, tokens: int, split: int) -> None:
        self.spec, self.ep, self.tokens, self.split = spec, ep, tokens, split
        self.notes: tuple[str, ...] = ()
        self.group: Any = None  # ranks 0..ep-1 (rank 0's expert-parallel group), made on first use

    def check(self, config: Any) -> None:
        experts, k, ep, spec = expert_count(config), top_k(config), self.ep, self.spec
        if not experts:
            raise UsageError(f"hf:{spec}: --ep applies to mixture-of-experts models; this config names no experts")
        if experts % ep:
            raise UsageError(f"hf:{spec}: --ep {ep} must divide the {experts} routed experts")
        if not k:
            raise UsageError(f"hf:{spec}: the config names no experts per token ({', '.join(TOP_K_KEYS)})")
        if self.tokens % self.split:
            raise UsageError(
                f"hf:{spec}: --tp {self.split} must divide the {self.tokens} tokens of a replica's step for "
                "its MoE layers (each tensor-parallel rank dispatches its share of them)"
            )

    def module(self, lm: torch.nn.Module, tp_group: Any) -> torch.nn.Module:
        config = lm.config
        experts, k, ep = expert_count(config), top_k(config), self.ep
        own = self.tokens // self.split
        send = exchanged_rows(own, k, experts, ep)
        if ep > 1 and self.group is None:
            whole = dist.get_world_size() == ep
            self.group = dist.group.WORLD if whole else dist.new_group(ranks=list(range(ep)))
        found = [
            (name, m) for name, m in lm.named_modules()
            if hasattr(m, "_is_expert_parallel") and getattr(m, "num_experts", None) == experts
        ]  # none in a model built with no MoE layer (the per-layer bound's empty model)
        for name, m in found:
            _shrink(m, experts, experts // ep)
            owner, _, leaf = name.rpartition(".")
            setattr(lm.get_submodule(owner), leaf, _ExpertShard(
                m, k=k, experts=experts, ep=ep, ep_group=self.group, split=self.split, tp_group=tp_group
            ))
        leave = leaving_rows(own, k, experts, ep)
        note = (
            f"expert parallel: {experts // ep} of {experts} experts per rank over {ep} ranks; routing bounded by "
            f"a balanced one ({own} x {k} rows per rank) of least traffic ({leave} rows leave and {leave} "
            f"arrive per rank; all-to-all buffers of {send} rows)"
        )
        self.notes = (note,)
        return lm
