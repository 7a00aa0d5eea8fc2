"""Order statistics: sort (jnp.sort, jnp.argsort, lax.sort with payload operands), top_k
(lax.top_k, the MoE router's expert choice) and approx_top_k (exact off TPUs), through the builder
the PyTorch frontend uses (solar/frontends/order.py): one IR order statement per primitive, its
values a data-dependent read of the keys at the positions, a payload operand read at the same
positions (an argsort's iota is the positions themselves), each written by the primitive's own
instance. Priced at bytes only, as the PyTorch ones (docs/BOUNDS.md, order statistics).

Order: stable (ties to the lower position; jnp's sorts are stable, and where is_stable=False
leaves ties open the stable order is one it allows), NaN greatest. Descending sorts reach here as
an ascending sort between `rev`s (jnp.sort(descending=True)), which the shape rules lower. Where
JAX orders by the floats' total order instead (top_k: -NaN least and -0.0 below +0.0) the values
still agree except for the sign of a NaN or a zero, and positions differ only among such keys.
A lexicographic sort over several keys (num_keys > 1: jnp.lexsort) has no order statement yet."""

from __future__ import annotations

from typing import Any

from solar.errors import UnsupportedOpError
from solar.frontends.builder import copy
from solar.frontends.jax.context import LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.frontends.jax.primitives import P
from solar.frontends.order import is_position, order, permute
from solar.frontends.views import View
from solar.ir.dtypes import DType


def _written(ctx: LowerCtx, k: int, v: View, pos: View) -> View:
    """Output `k` as the primitive's kernel writes it: the positions tensor itself, or a tensor of
    this instance holding the read at the positions (a load: no work). An eager XLA sort or top_k
    writes its outputs and never its permutation, which stays inside its instance; a read left as
    a view would make the next kernel read the positions (the unfused bound would charge the
    permutation's bytes, which jnp.sort never moves). An output nobody reads is dropped by the
    demand pass."""
    if v is pos:
        return v
    return copy(ctx.b, f"{ctx.hint}_{'values' if k == 0 else f'out{k}'}", v)


@lower(P.sort_p)
def _sort(
    ctx: LowerCtx, *operands: Any, dimension: int, is_stable: bool, num_keys: int
) -> list[View]:
    if num_keys != 1:
        raise UnsupportedOpError(
            f"sort with num_keys={num_keys} (a lexicographic sort over several keys, jnp.lexsort) "
            "is not supported yet; sort by one key"
        )
    keys, *payloads = (as_view(x, (), dt) for x, (_, dt) in zip(operands, ctx.out_avals))
    n = keys.shape[dimension]
    # positions in the dtype of an argsort's iota, which then is the positions tensor itself
    iotas = [p.dtype for p in payloads if is_position(p, dimension)]
    index_dtype = iotas[0] if iotas else DType.I64
    values, pos = order(ctx.b, ctx.hint, keys, dim=dimension, count=n, index_dtype=index_dtype)
    outs = [values, *(permute(ctx.b, ctx.hint, p, pos, dim=dimension) for p in payloads)]
    return [_written(ctx, k, v, pos) for k, v in enumerate(outs)]


@lower(P.top_k_p)
def _top_k(ctx: LowerCtx, x: Any, *, k: int, axis: int = -1, is_stable: bool = True) -> list[View]:
    """lax.top_k (JAX 0.11 adds `is_stable`): the order statement breaks ties by the lower
    position, the stable result, which is also one of the results an unstable top_k may give."""
    return _selection(ctx, x, axis, k, descending=True)


def _selection(ctx: LowerCtx, x: Any, dim: int, k: int, descending: bool) -> list[View]:
    """The k first of `x` along `dim` in the order asked (values written, positions a view)."""
    _, index_dtype = ctx.meta(1)
    values, pos = order(
        ctx.b, ctx.hint, as_view(x), dim=dim, count=int(k), descending=descending,
        index_dtype=index_dtype,
    )
    return [_written(ctx, 0, values, pos), pos]


@lower(P.approx_top_k_p)
def _approx_top_k(
    ctx: LowerCtx,
    x: Any,
    *,
    k: int,
    reduction_dimension: int,
    recall_target: float,
    is_max_k: bool,
    reduction_input_size_override: int,
    aggregate_to_topk: bool,
) -> list[View]:
    """lax.approx_max_k / approx_min_k: approximate on TPUs only; elsewhere XLA falls back to an
    exact sort and slice, which is what the order statement computes (GPUs are solar's targets)."""
    if not aggregate_to_topk or reduction_input_size_override not in (-1, None):
        raise UnsupportedOpError(
            "approx_top_k without aggregate_to_topk, or with reduction_input_size_override (a "
            "TPU-specific partial result) is not supported yet; use the defaults"
        )
    return _selection(ctx, x, reduction_dimension, k, descending=bool(is_max_k))

