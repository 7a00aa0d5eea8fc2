"""torch.distributed functional collectives (`_c10d_functional`: what functional collectives,
DTensor and traced `torch.distributed` calls become) as collective local parts: the rank's own copy
of its buffer, its origin naming the collective and its groups (solar.ir.collectives), so the
communication is priced from the collective and the interpreter runs it on simulated ranks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from solar.errors import UnsupportedOpError, UsageError
from solar.frontends.collective import emit_collective
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.collectives import Kind
from solar.ir.scalar_ops import Update

c10d = torch.ops._c10d_functional

REDUCE_OPS = {"sum": Update.ADD, "max": Update.MAX, "min": Update.MIN}


def rank_groups(group_name: str) -> tuple[tuple[int, ...], ...]:
    """The process group `group_name` as a partition of all ranks: its own ranks and their shifts
    (a mesh dimension's groups are translates of the one holding rank 0)."""
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group

    if not dist.is_initialized():
        raise UsageError("the program calls a torch.distributed collective; pass --world-size N (or --mesh AxB)")
    mine = tuple(sorted(dist.get_process_group_ranks(_resolve_process_group(group_name))))
    world, covered, groups = dist.get_world_size(), set(), []
    for start in range(world):
        if start in covered:
            continue
        group = tuple(r + start - mine[0] for r in mine)
        if any(r >= world or r in covered for r in group):
            raise UsageError(f"process group {list(mine)} does not tile the {world} ranks; use groups of one shape")
        covered.update(group)
        groups.append(group)
    return tuple(groups)


def _collective(ctx: LowerCtx, kind: Kind, x: View, group_name: str, reduce: str = "sum", dim: int = 0) -> View:
    if reduce not in REDUCE_OPS:
        raise UnsupportedOpError(f"{ctx.node.target}: reduction {reduce!r} (supported: {', '.join(REDUCE_OPS)})")
    return emit_collective(
        ctx.b, ctx.hint, kind, x, ctx.shape, ctx.dtype, rank_groups(group_name), REDUCE_OPS[reduce], dim
    )


@lower(c10d.all_reduce.default)
def _all_reduce(ctx: LowerCtx, x: View, reduce_op: str, group_name: str) -> View:
    return _collective(ctx, Kind.ALL_REDUCE, x, group_name, reduce_op)


@lower(c10d.all_gather_into_tensor.default)
def _all_gather(ctx: LowerCtx, x: View, group_size: int, group_name: str) -> View:
    return _collective(ctx, Kind.ALL_GATHER, x, group_name)


@lower(c10d.reduce_scatter_tensor.default)
def _reduce_scatter(ctx: LowerCtx, x: View, reduce_op: str, group_size: int, group_name: str) -> View:
    return _collective(ctx, Kind.REDUCE_SCATTER, x, group_name, reduce_op)


@lower(c10d.all_to_all_single.default)
def _all_to_all(
    ctx: LowerCtx, x: View, output_split_sizes: Sequence[int] | None, input_split_sizes: Sequence[int] | None,
    group_name: str,
) -> View:
    shift = _permutation_shift(ctx, output_split_sizes, input_split_sizes)
    if shift is not None:  # funcol.permute_tensor: the whole buffer to one rank, from one rank
        return emit_collective(ctx.b, ctx.hint, Kind.SEND_RECV, x, ctx.shape, ctx.dtype, rank_groups(group_name), shift=shift)
    for sizes in (output_split_sizes, input_split_sizes):
        if sizes and len(set(sizes)) > 1:
            raise UnsupportedOpError(f"{ctx.node.target}: uneven splits {list(sizes)} (even splits only)")
    return _collective(ctx, Kind.ALL_TO_ALL, x, group_name)


def _permutation_shift(ctx: LowerCtx, received: Sequence[int] | None, sent: Sequence[int] | None) -> int | None:
    """The shift of an all-to-all in which this rank (position 0 of its group) sends its whole
    buffer to position d and receives a whole buffer from position n - d: a send/recv by d places
    (what `permute_tensor` traces to); None for any other splits."""
    if not received or not sent or len(received) != len(sent):
        return None
    n = len(sent)
    to = [p for p, k in enumerate(sent) if k]
    frm = [p for p, k in enumerate(received) if k]
    if len(to) != 1 or len(frm) != 1 or sent[to[0]] != ctx.node.args[0].meta["val"].numel():
        return None
    if (-frm[0]) % n != to[0]:
        raise UnsupportedOpError(
            f"{ctx.node.target}: rank 0 sends to {to[0]} but receives from {frm[0]}; only a shift of every "
            "rank by one offset is supported yet"
        )
    return to[0]


@lower(c10d.wait_tensor.default)
def _wait(ctx: LowerCtx, x: View, **kwargs: Any) -> View:
    return x

