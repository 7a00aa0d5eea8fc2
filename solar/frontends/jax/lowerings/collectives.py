"""JAX collectives inside `shard_map` (psum, pmax, pmin, all_gather, psum_scatter, all_to_all,
ppermute; axis_index and the replication casts) as collective local parts over the groups of the
mesh axes they name. The mesh is the one of the shard_map being lowered (`MESH`, set by
solar.frontends.jax.sharded); the program is rank 0's, so axis_index is 0."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from jax._src import core as jax_core
from jax._src.lax import parallel

from solar.errors import UnsupportedOpError, UsageError
from solar.frontends import views
from solar.frontends.collective import emit_collective, mesh_groups
from solar.frontends.jax.context import LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.ir.collectives import Kind
from solar.ir.scalar_ops import Update

# (axis names, axis sizes) of the mesh of the shard_map whose body is being lowered
MESH: ContextVar[tuple[tuple[str, ...], tuple[int, ...]] | None] = ContextVar("jax_mesh", default=None)

PSUMS = (parallel.psum_p, parallel.psum_invariant_p)
COLLECTIVE_PRIMITIVES = (
    *PSUMS, parallel.pmax_p, parallel.pmin_p, parallel.all_gather_p, parallel.reduce_scatter_p,
    parallel.all_to_all_p, parallel.ppermute_p, parallel.axis_index_p, jax_core.pvary_p,
)


def _groups(axis_name: Any, groups: Any) -> tuple[tuple[int, ...], ...]:
    mesh = MESH.get()
    if mesh is None:
        raise UsageError("a JAX collective outside shard_map; solar bounds collectives inside a shard_map body")
    if groups is not None:
        raise UnsupportedOpError("axis_index_groups (collectives over part of an axis) are not supported yet")
    names, sizes = mesh
    wanted = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    unknown = [a for a in wanted if a not in names]
    if unknown:
        raise UsageError(f"mesh axis {unknown[0]!r} is not one of the mesh's axes {list(names)}")
    return mesh_groups(sizes, [names.index(a) for a in wanted])


def _reduce(ctx: LowerCtx, update: Update, args: tuple, axes: Any, axis_index_groups: Any = None) -> list:
    groups = _groups(axes, axis_index_groups)
    outs = []
    for k, x in enumerate(args):
        shape, dtype = ctx.meta(k)
        outs.append(emit_collective(ctx.b, ctx.hint, Kind.ALL_REDUCE, as_view(x, shape, dtype), shape, dtype, groups, update))
    return outs


@lower(*PSUMS)
def _psum(ctx: LowerCtx, *args: Any, axes: Any, axis_index_groups: Any = None, **_: Any) -> Any:
    out = _reduce(ctx, Update.ADD, args, axes, axis_index_groups)
    return out if ctx.prim.multiple_results else out[0]


@lower(parallel.pmax_p)
def _pmax(ctx: LowerCtx, *args: Any, axes: Any, axis_index_groups: Any = None, **_: Any) -> Any:
    out = _reduce(ctx, Update.MAX, args, axes, axis_index_groups)
    return out if ctx.prim.multiple_results else out[0]


@lower(parallel.pmin_p)
def _pmin(ctx: LowerCtx, *args: Any, axes: Any, axis_index_groups: Any = None, **_: Any) -> Any:
    out = _reduce(ctx, Update.MIN, args, axes, axis_index_groups)
    return out if ctx.prim.multiple_results else out[0]


@lower(parallel.all_gather_p)
def _all_gather(
    ctx: LowerCtx, x: Any, *, all_gather_dimension: int, axis_name: Any, axis_index_groups: Any, axis_size: int,
    tiled: bool, **_: Any,
) -> Any:
    groups = _groups(axis_name, axis_index_groups)
    v = as_view(x)
    if not tiled:
        v = views.unsqueeze(v, all_gather_dimension)
    return emit_collective(ctx.b, ctx.hint, Kind.ALL_GATHER, v, ctx.shape, ctx.dtype, groups, dim=all_gather_dimension)


@lower(parallel.reduce_scatter_p)
def _reduce_scatter(
    ctx: LowerCtx, x: Any, *, scatter_dimension: int, axis_name: Any, axis_index_groups: Any, axis_size: int,
    tiled: bool, **_: Any,
) -> Any:
    groups = _groups(axis_name, axis_index_groups)
    shape = list(ctx.shape)
    if not tiled:
        shape.insert(scatter_dimension, 1)
    out = emit_collective(ctx.b, ctx.hint, Kind.REDUCE_SCATTER, x, shape, ctx.dtype, groups, dim=scatter_dimension)
    return out if tiled else views.squeeze(out, [scatter_dimension])


@lower(parallel.all_to_all_p)
def _all_to_all(
    ctx: LowerCtx, x: Any, *, split_axis: int, concat_axis: int, axis_name: Any, axis_index_groups: Any,
    tiled: bool = False, **_: Any,
) -> Any:
    """Chunk j of `x` along split_axis goes to the group's j-th rank, and the chunks received are
    joined along concat_axis in rank order (the primitive's shapes, tiled or not: split_axis / n,
    concat_axis x n; the untiled form is traced with a size-1 axis added and removed around it).
    Lowered as the IR's all_to_all over a leading axis of the n chunks (the argument a permuted
    view, copied as the collective's input), whose result, indexed by the sending rank first, is a
    view moved to concat_axis; where split_axis == concat_axis, the IR's own along that axis."""
    groups = _groups(axis_name, axis_index_groups)
    n = len(groups[0])
    v = as_view(x)
    if split_axis == concat_axis:
        return emit_collective(ctx.b, ctx.hint, Kind.ALL_TO_ALL, v, ctx.shape, ctx.dtype, groups, dim=split_axis)
    shape = list(v.shape)
    v = views.reshape(v, shape[:split_axis] + [n, shape[split_axis] // n] + shape[split_axis + 1:])
    chunks = views.permute(v, [split_axis] + [d for d in range(len(v.shape)) if d != split_axis])
    out = emit_collective(ctx.b, ctx.hint, Kind.ALL_TO_ALL, chunks, chunks.shape, ctx.dtype, groups, dim=0)
    c, rest = concat_axis, len(out.shape) - 1
    moved = views.permute(out, [d + 1 for d in range(c)] + [0] + [d + 1 for d in range(c, rest)])
    return views.reshape(moved, ctx.shape)


@lower(parallel.ppermute_p)
def _ppermute(ctx: LowerCtx, x: Any, *, axis_name: Any, perm: Any, **_: Any) -> Any:
    groups = _groups(axis_name, None)
    n = len(groups[0])
    shifts = {(dst - src) % n for src, dst in perm}
    if len(shifts) != 1 or len(perm) != n:
        raise UnsupportedOpError(f"ppermute {list(perm)}: only a shift of every rank by one offset is supported yet")
    return emit_collective(ctx.b, ctx.hint, Kind.SEND_RECV, x, ctx.shape, ctx.dtype, groups, shift=shifts.pop())


@lower(parallel.axis_index_p)
def _axis_index(ctx: LowerCtx, *, axis_name: Any, **_: Any) -> int:
    _groups(axis_name, None)
    return 0


@lower(jax_core.pvary_p)
def _pvary(ctx: LowerCtx, *args: Any, **_: Any) -> Any:
    return list(args) if ctx.prim.multiple_results else args[0]
