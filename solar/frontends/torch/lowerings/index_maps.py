"""Guarded index maps: padding (constant, reflect, replicate, circular), flip, roll, diagonal,
diag/diag_embed and tril/triu as lazy views whose pieces are guarded affine index maps (no
statements, no work: a consumer reads the source directly, and a triangle or diagonal reaches the
consumer as guards)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import Alt, View
from solar.ir.affine import Affine, Constraint, ge, lt
from solar.ir.nodes import Const

aten = torch.ops.aten

# Ops the loader should keep whole rather than decompose: their decompositions go through
# data-dependent indexing (reflect/replicate pad, roll), slice_scatter (circular pad) or
# elementwise index arithmetic (tril/triu, diag_embed) that counts ops a kernel does not need.
PRESERVE = frozenset(
    {
        aten.pad.default,
        aten.roll.default,
        aten.tril.default,
        aten.triu.default,
        aten.diag_embed.default,
        aten.diag.default,
    }
)

Index = tuple[Affine, ...]
Piece = tuple[tuple[Constraint, ...], Affine | None]  # guards on the output index, source index


# ---- padding -------------------------------------------------------------------------------------

# mode -> (source of the `before` piece, source of the `after` piece) given the output position i,
# the left pad l and the source size n; None means the fill value.
PAD_MODES: dict[str, tuple[Callable[[Affine, int, int], Affine | None], ...]] = {
    "constant": (lambda i, l, n: None, lambda i, l, n: None),
    "reflect": (lambda i, l, n: l - i, lambda i, l, n: 2 * (n - 1) + l - i),
    "replicate": (lambda i, l, n: Affine(), lambda i, l, n: Affine(const=n - 1)),
    "circular": (lambda i, l, n: i - l + n, lambda i, l, n: i - l - n),
}


def _pad_pieces(mode: str, i: Affine, left: int, n: int) -> list[Piece]:
    before, after = PAD_MODES[mode]
    return [
        ((ge(i, left), lt(i, left + n)), i - left),
        ((lt(i, left),), before(i, left, n)),
        ((ge(i, left + n),), after(i, left, n)),
    ]


def pad_view(x: View, pad: Sequence[int], mode: str, value: float) -> View:
    """Pad the last len(pad)//2 dims; pad lists (left, right) from the last dim backwards."""
    if mode not in PAD_MODES:
        raise SolarError(f"padding mode {mode!r} is not supported; known: {', '.join(PAD_MODES)}")
    pairs = {x.rank - 1 - k: (pad[2 * k], pad[2 * k + 1]) for k in range(len(pad) // 2)}
    shape = tuple(s + sum(pairs.get(d, (0, 0))) for d, s in enumerate(x.shape))

    def fn(idx: Index) -> tuple[Alt, ...]:
        per_dim = [
            _pad_pieces(mode, idx[d], pairs[d][0], x.shape[d]) if d in pairs else [((), idx[d])]
            for d in range(x.rank)
        ]
        if mode == "constant":  # inside everywhere, else outside at the first dim that leaves
            combos = [[p[0] for p in per_dim]]
            for d in pairs:
                for outside in per_dim[d][1:]:
                    combos.append(
                        [p[0] for p in per_dim[:d]]
                        + [outside]
                        + [((), idx[k]) for k in range(d + 1, x.rank)]
                    )
        else:
            combos = [list(c) for c in itertools.product(*per_dim)]
        alts: list[Alt] = []
        for combo in combos:
            guards = tuple(g for gs, _ in combo for g in gs)
            src = [s for _, s in combo]
            if any(s is None for s in src):
                alts.append((guards, Const(value)))
            else:
                alts.extend((guards + g, e) for g, e in x.at(tuple(src)))
        return tuple(alts)

    return views.indexed(shape, x.dtype, fn)


@lower(aten.constant_pad_nd.default)
def _constant_pad(ctx: LowerCtx, x: View, pad: Sequence[int], value: Any = 0) -> View:
    return pad_view(x, pad, "constant", value)


@lower(aten.pad.default)
def _pad(
    ctx: LowerCtx, x: View, pad: Sequence[int], mode: str = "constant", value: Any = None
) -> View:
    return pad_view(x, pad, mode, 0.0 if value is None else value)


# ---- flip, roll, diagonals, triangles ------------------------------------------------------------


def _map(x: View, shape: Sequence[int], fn: Callable[[Index], Index]) -> View:
    return views.indexed(shape, x.dtype, lambda idx: x.at(fn(tuple(idx))))


@lower(aten.flip.default)
def _flip(ctx: LowerCtx, x: View, dims: Sequence[int]) -> View:
    flipped = {d % x.rank for d in dims}
    return _map(
        x,
        x.shape,
        lambda idx: tuple(x.shape[d] - 1 - e if d in flipped else e for d, e in enumerate(idx)),
    )


def roll_view(x: View, shift: int, dim: int) -> View:
    """out[i] = x[(i - shift) mod n] as two affine pieces."""
    n = x.shape[dim]
    s = shift % n if n else 0

    def fn(idx: Index) -> tuple[Alt, ...]:
        i = idx[dim]
        pieces = [((lt(i, s),), i - s + n), ((ge(i, s),), i - s)]
        return tuple(
            (guards + g, e)
            for guards, src in pieces
            for g, e in x.at(idx[:dim] + (src,) + idx[dim + 1 :])
        )

    return views.indexed(x.shape, x.dtype, fn)


@lower(aten.roll.default)
def _roll(ctx: LowerCtx, x: View, shifts: Sequence[int], dims: Sequence[int] = ()) -> View:
    if not dims:
        return views.reshape(roll_view(views.reshape(x, (x.numel,)), shifts[0], 0), x.shape)
    for shift, dim in zip(shifts, dims):
        x = roll_view(x, shift, dim % x.rank)
    return x


def diagonal_view(x: View, offset: int, dim1: int, dim2: int) -> View:
    d1, d2 = dim1 % x.rank, dim2 % x.rank
    o1, o2 = max(0, -offset), max(0, offset)
    length = max(0, min(x.shape[d1] - o1, x.shape[d2] - o2))
    rest = [d for d in range(x.rank) if d not in (d1, d2)]
    shape = [x.shape[d] for d in rest] + [length]

    def fn(idx: Index) -> Index:
        full: list[Affine] = [Affine()] * x.rank
        for pos, d in enumerate(rest):
            full[d] = idx[pos]
        full[d1], full[d2] = idx[-1] + o1, idx[-1] + o2
        return tuple(full)

    return _map(x, shape, fn)


@lower(aten.diagonal.default)
def _diagonal(ctx: LowerCtx, x: View, offset: int = 0, dim1: int = 0, dim2: int = 1) -> View:
    return diagonal_view(x, offset, dim1, dim2)


def diag_embed_view(x: View, offset: int, dim1: int, dim2: int) -> View:
    """out[..., i, j] = x[..., min(i, j)] on the diagonal j - i = offset, 0 elsewhere."""
    rank = x.rank + 1
    d1, d2 = dim1 % rank, dim2 % rank
    n = x.shape[-1] + abs(offset)
    rest = [d for d in range(rank) if d not in (d1, d2)]
    shape = [0] * rank
    for pos, d in enumerate(rest):
        shape[d] = x.shape[pos]
    shape[d1] = shape[d2] = n

    def fn(idx: Index) -> tuple[Alt, ...]:
        i, j = idx[d1], idx[d2]
        off = j - i - offset
        src = tuple(idx[d] for d in rest) + (i if offset >= 0 else j,)
        on = tuple((g + (Constraint(off, equality=True),), e) for g, e in x.at(src))
        return on + (((ge(off, 1),), Const(0)), ((ge(-off, 1),), Const(0)))

    return views.indexed(shape, x.dtype, fn)


@lower(aten.diag_embed.default)
def _diag_embed(ctx: LowerCtx, x: View, offset: int = 0, dim1: int = -2, dim2: int = -1) -> View:
    return diag_embed_view(x, offset, dim1, dim2)


@lower(aten.diag.default)
def _diag(ctx: LowerCtx, x: View, diagonal: int = 0) -> View:
    if x.rank == 1:
        return diag_embed_view(x, diagonal, 0, 1)
    return diagonal_view(x, diagonal, 0, 1)


def _triangle(keep_lower: bool) -> Callable[..., View]:
    """tril keeps j - i <= k, triu keeps j - i >= k; the rest reads as 0."""

    def rule(ctx: LowerCtx, x: View, diagonal: int = 0) -> View:
        def fn(idx: Index) -> tuple[Alt, ...]:
            gap = idx[-1] - idx[-2] - diagonal  # j - i - k
            keep, drop = (ge(-gap, 0), ge(gap, 1)) if keep_lower else (ge(gap, 0), ge(-gap, 1))
            return tuple((g + (keep,), e) for g, e in x.at(idx)) + (((drop,), Const(0)),)

        return views.indexed(x.shape, x.dtype, fn)

    return rule


lower(aten.tril.default)(_triangle(True))
lower(aten.triu.default)(_triangle(False))


__all__ = ["PAD_MODES", "PRESERVE", "diag_embed_view", "diagonal_view", "pad_view", "roll_view"]
