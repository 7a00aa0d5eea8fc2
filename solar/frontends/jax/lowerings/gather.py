"""gather (XLA semantics) as a view whose indexed dimensions are data-dependent (IR `Indirect`)
accesses: embedding lookups (`table[ids]`, `jnp.take`), take_along_axis, row selection.

Indices are taken as in bounds (PROMISE_IN_BOUNDS); JAX's default FILL_OR_DROP / CLIP modes give
the same values for in-bound indices, and the interpreter rejects an out-of-bounds index."""

from __future__ import annotations

import itertools
from typing import Any

from solar.frontends.builder import elementwise
from solar.frontends.jax.context import LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.frontends.jax.primitives import P
from solar.frontends.views import Alt, View
from solar.ir.affine import Affine
from solar.ir.nodes import Indirect, Load


def _materialise(ctx: LowerCtx, x: View) -> str:
    """The name of a tensor holding exactly `x` (an indirect access needs a real tensor)."""
    if x.base is not None:
        return x.base
    out = elementwise(ctx.b, f"{ctx.hint}_operand", x.shape, x.dtype, [x], lambda t: t)
    return out.base


@lower(P.gather_p)
def _gather(
    ctx: LowerCtx, operand: Any, indices: Any, *, dimension_numbers: Any, slice_sizes: Any, **_: Any
) -> View:
    x = as_view(operand)
    ind = as_view(indices)
    dn = dimension_numbers
    base = _materialise(ctx, x)
    offset_dims = tuple(dn.offset_dims)
    collapsed = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    start_map = tuple(dn.start_index_map)
    op_batch = tuple(dn.operand_batching_dims)
    ind_batch = tuple(dn.start_indices_batching_dims)
    out_rank = len(ctx.shape)
    batch_pos = [d for d in range(out_rank) if d not in offset_dims]
    window_dims = [d for d in range(x.rank) if d not in collapsed]  # in order of offset_dims

    def fn(idx: tuple[Affine, ...]) -> tuple[Alt, ...]:
        g = [idx[d] for d in batch_pos]  # the index of indices' batch dimensions
        offsets = dict(zip(window_dims, (idx[d] for d in offset_dims)))
        starts = [ind.at((*g, Affine(const=k))) for k in range(len(start_map))]
        alts: list[Alt] = []
        for combo in itertools.product(*starts):
            terms: list[Any] = []
            for d in range(x.rank):
                offset = offsets.get(d, Affine())
                if d in start_map:
                    terms.append(Indirect(combo[start_map.index(d)][1], offset))
                elif d in op_batch:
                    terms.append(g[ind_batch[op_batch.index(d)]] + offset)
                else:
                    terms.append(offset)
            guards = tuple(gd for gs, _ in combo for gd in gs)
            alts.append((guards, Load(base, tuple(terms))))
        return tuple(alts)

    return View(ctx.shape, x.dtype, fn)
