"""Shape primitives as index maps (no copies, no statements): broadcast, reshape, transpose,
squeeze, slices with static starts, concatenate, split, pad (negative and interior too), rev, iota,
dynamic_update_slice, and the identities (copy, stop_gradient, optimization_barrier).

Piecewise results (pad, dynamic_update_slice) are views with one guarded alternative per region;
a consumer becomes one statement per region, so padding costs no arithmetic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.jax.context import IndexValue, LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.frontends.jax.primitives import P
from solar.frontends.views import Alt, View
from solar.ir.affine import Affine, Constraint, const, ge, lt
from solar.ir.nodes import Cast, Index

Idx = tuple[Affine, ...]


def _view(ctx: LowerCtx, x: Any) -> View:
    """An operand as a view (a literal becomes a rank-0 constant of the output dtype)."""
    return as_view(x, (), ctx.dtype)


@lower(P.broadcast_in_dim_p)
def _broadcast_in_dim(
    ctx: LowerCtx, x: Any, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], **_: Any
) -> View:
    if not isinstance(x, (View, IndexValue)):
        return views.constant(x, ctx.shape, ctx.dtype)
    x = as_view(x)
    dims = tuple(broadcast_dimensions)

    def fn(idx: Idx) -> Idx:
        return tuple(Affine() if x.shape[k] == 1 else idx[d] for k, d in enumerate(dims))

    return View(ctx.shape, x.dtype, lambda idx: x.at(fn(tuple(idx))))


@lower(P.reshape_p)
def _reshape(
    ctx: LowerCtx,
    x: Any,
    *,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None = None,
    **_: Any,
) -> View:
    x = _view(ctx, x)
    if dimensions is not None:
        x = views.permute(x, dimensions)
    return views.reshape(x, ctx.shape)


@lower(P.transpose_p)
def _transpose(ctx: LowerCtx, x: Any, *, permutation: Sequence[int]) -> View:
    return views.permute(_view(ctx, x), permutation)


@lower(P.squeeze_p)
def _squeeze(ctx: LowerCtx, x: Any, *, dimensions: Sequence[int]) -> View:
    return views.squeeze(_view(ctx, x), dimensions)


@lower(P.slice_p)
def _slice(
    ctx: LowerCtx,
    x: Any,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> View:
    x = _view(ctx, x)
    for d, (lo, hi) in enumerate(zip(start_indices, limit_indices)):
        step = 1 if strides is None else strides[d]
        if (lo, hi, step) != (0, x.shape[d], 1):
            x = views.slice_(x, d, lo, hi, step)
    return x


def _start(x: Any, size: int, extent: int) -> Affine:
    """A start index of dynamic_slice / dynamic_update_slice: a literal (clamped into range as
    JAX does) or a loop counter; data-dependent starts are not affine."""
    if isinstance(x, IndexValue):
        return x.expr
    if isinstance(x, int) and not isinstance(x, bool):
        return const(min(max(x, 0), extent - size))
    raise SolarError(
        "a dynamic_slice / dynamic_update_slice whose start index is data (not a constant or a loop "
        "counter) is not supported yet; use static indices or jnp.take"
    )


def _offset(x: View, shape: Sequence[int], starts: Sequence[Affine]) -> View:
    return View(tuple(shape), x.dtype, lambda idx: x.at(tuple(i + s for i, s in zip(idx, starts))))


@lower(P.dynamic_slice_p)
def _dynamic_slice(ctx: LowerCtx, x: Any, *starts: Any, slice_sizes: Sequence[int]) -> View:
    x = _view(ctx, x)
    return _offset(
        x, slice_sizes, [_start(s, n, e) for s, n, e in zip(starts, slice_sizes, x.shape)]
    )


@lower(P.dynamic_update_slice_p)
def _dynamic_update_slice(ctx: LowerCtx, x: Any, update: Any, *starts: Any, **_: Any) -> View:
    """x with the box [start, start + update.shape) replaced by `update`: the box, plus for each
    dimension d the parts below and above the box in d (inside it in the dimensions before d)."""
    x, update = _view(ctx, x), _view(ctx, update)
    s = [_start(v, n, e) for v, n, e in zip(starts, update.shape, x.shape)]

    def fn(idx: Idx) -> tuple[Alt, ...]:
        alts: list[Alt] = []
        inside: list[Constraint] = []
        for d, (i, n) in enumerate(zip(idx, update.shape)):
            for g in (lt(i, s[d]), ge(i, s[d] + n)):
                alts.extend((tuple(inside) + (g,) + gs, e) for gs, e in x.at(idx))
            inside += [ge(i, s[d]), lt(i, s[d] + n)]
        inner = tuple(i - o for i, o in zip(idx, s))
        alts.extend((tuple(inside) + gs, e) for gs, e in update.at(inner))
        return tuple(alts)

    return View(x.shape, x.dtype, fn)


@lower(P.concatenate_p)
def _concatenate(ctx: LowerCtx, *xs: Any, dimension: int) -> View:
    return views.cat([_view(ctx, x) for x in xs], dimension)


@lower(P.split_p)
def _split(ctx: LowerCtx, x: Any, *, sizes: Sequence[int], axis: int) -> list[View]:
    x = _view(ctx, x)
    out, start = [], 0
    for size in sizes:
        out.append(views.slice_(x, axis, start, start + int(size)))
        start += int(size)
    return out


@lower(P.pad_p)
def _pad(
    ctx: LowerCtx, x: Any, value: Any, *, padding_config: Sequence[tuple[int, int, int]]
) -> View:
    """Output position o reads x[(o - lo) / (interior + 1)] where that is an element of x (after
    `interior` zeros between elements; negative lo/hi crop); every other position is `value`."""
    x, pad_value = _view(ctx, x), _view(ctx, value)
    config = [(int(lo), int(hi), int(interior)) for lo, hi, interior in padding_config]

    def fn(idx: Idx) -> tuple[Alt, ...]:
        alts: list[Alt] = []
        inside: list[Constraint] = []
        source: list[Affine] = []
        for d, ((lo, _, interior), n) in enumerate(zip(config, x.shape)):
            step = interior + 1
            p = idx[d] - lo
            span = (ge(p, 0), lt(p, (n - 1) * step + 1))  # from the first to the last element
            outside = [(lt(p, 0),), (ge(p, (n - 1) * step + 1),)]
            if step > 1:
                outside.append(span + (Constraint(p % step - 1),))  # between two elements
            for guards in outside:
                alts.extend((tuple(inside) + guards + gs, e) for gs, e in pad_value.at(()))
            inside += span
            if step > 1:
                inside.append(Constraint(p % step, equality=True))
            source.append(p // step)
        alts.extend((tuple(inside) + gs, e) for gs, e in x.at(tuple(source)))
        return tuple(alts)

    return View(ctx.shape, x.dtype, fn)


@lower(P.rev_p)
def _rev(ctx: LowerCtx, x: Any, *, dimensions: Sequence[int]) -> View:
    x = _view(ctx, x)
    dims = set(dimensions)

    def fn(idx: Idx) -> Idx:
        return tuple(x.shape[d] - 1 - i if d in dims else i for d, i in enumerate(idx))

    return View(x.shape, x.dtype, lambda idx: x.at(fn(tuple(idx))))


@lower(P.iota_p)
def _iota(ctx: LowerCtx, *, dtype: Any, shape: Sequence[int], dimension: int, **_: Any) -> View:
    out = ctx.dtype
    return View(ctx.shape, out, lambda idx: (((), Cast(out, Index(idx[dimension]))),))


@lower(P.copy_p, P.stop_gradient_p)
def _identity(ctx: LowerCtx, x: Any, **_: Any) -> Any:
    return x


@lower(P.optimization_barrier_p)
def _barrier(ctx: LowerCtx, *xs: Any, **_: Any) -> list[Any]:
    return list(xs)
