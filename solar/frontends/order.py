"""Order statistics for every frontend: the position of the key of each rank along one dimension
(one IR order statement) and reads at those positions (views, nothing copied).

`order` emits `pos[.., j, ..] = order(x[.., r, ..], r, j)`, the position along `r` of the key of
rank `j` (ties to the lower position: a stable order; NaN greatest), and returns the values as a
data-dependent read `x[.., ind(pos[.., j, ..]), ..]`; `permute` reads any other tensor of the
same shape at those positions (a sort's payload operands). The order statement computes nothing:
it is priced at its bytes only (docs/BOUNDS.md, order statistics)."""

from __future__ import annotations

from solar.frontends import views
from solar.frontends.builder import ProgramBuilder, const, elementwise, loop_vars
from solar.frontends.views import View
from solar.ir.affine import Affine, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Cast, Expr, Index, Load, Order
from solar.ir.scalar_ops import Update


def _element(v: View) -> Expr | None:
    """The expression under casts of `v`'s element at the probe index `_probe0, _probe1, ..`,
    when every element is one unguarded expression."""
    alts = v.at(tuple(var(f"_probe{k}") for k in range(v.rank)))
    if len(alts) != 1 or alts[0][0]:
        return None
    expr = alts[0][1]
    while isinstance(expr, Cast):
        expr = expr.arg
    return expr


def _plain(v: View) -> bool:
    """Every element of `v` is one unguarded load (under casts) with affine indices."""
    expr = _element(v)
    return isinstance(expr, Load) and all(isinstance(t, Affine) for t in expr.index)


def _copy(b: ProgramBuilder, hint: str, x: View) -> View:
    return elementwise(b, hint, x.shape, x.dtype, [x], lambda t: t)


def plain_keys(b: ProgramBuilder, hint: str, x: View) -> View:
    """`x` as something an order statistic can read: itself, or a copy when it is computed or
    pieced together (an order's key computes nothing)."""
    return x if _plain(x) else _copy(b, f"{hint}_keys", x)


def _readable_at(b: ProgramBuilder, hint: str, x: View, d: int, count: int) -> View:
    """`x`, or a copy of it, whose loads take a data-dependent index along `d` (a reshape's
    would index it non-linearly)."""
    x = plain_keys(b, hint, x)
    shape = (*x.shape[:d], count, *x.shape[d + 1 :])
    probe = lambda i: (*i[:d], Load("_probe", tuple(i)), *i[d + 1 :])  # noqa: E731
    return x if views.indirect(x, shape, probe) is not None else _copy(b, f"{hint}_keys", x)


def _at_positions(x: View, pos: View, d: int) -> View:
    at = lambda i: pos.at(tuple(i))[0][1]  # noqa: E731
    out = views.indirect(x, pos.shape, lambda i: (*i[:d], at(i), *i[d + 1 :]))
    assert out is not None  # x is plain: its loads take an indirect index directly
    return out


def order(
    b: ProgramBuilder,
    hint: str,
    x: View,
    *,
    dim: int,
    count: int,
    first: int = 0,
    descending: bool = False,
    index_dtype: DType = DType.I64,
) -> tuple[View, View]:
    """(values, positions) of the keys of ranks first .. first+count-1 along `dim` of `x`, in
    rank order; both have `x`'s shape with `dim` of size `count` (positions of `index_dtype`)."""
    if x.rank == 0:
        values, positions = order(
            b,
            hint,
            views.unsqueeze(x, 0),
            dim=0,
            count=count,
            first=first,
            descending=descending,
            index_dtype=index_dtype,
        )
        return views.squeeze(values, [0]), views.squeeze(positions, [0])
    d = dim % x.rank
    n = x.shape[d]
    shape = (*x.shape[:d], count, *x.shape[d + 1 :])
    x = _readable_at(b, hint, x, d, count)
    pos = b.temp(f"{hint}_pos", shape, index_dtype)
    loops, idx = loop_vars("i", shape)
    if n == 1:  # one key: its position is 0
        b.emit(loops, pos.base, idx, Update.ASSIGN, const(0))
    elif count > 0:
        key = x.at((*idx[:d], var("r"), *idx[d + 1 :]))[0][1]
        rank = idx[d] + first if count > 1 else Affine(const=first)
        value = (((), Order(key, "r", rank, descending)),)
        b.emit([*loops, ("r", n)], pos.base, idx, Update.ASSIGN, value)
    return _at_positions(x, pos, d), pos


def is_position(x: View, d: int) -> bool:
    """Every element of `x` is its own index along `d` (an iota), under casts."""
    expr = _element(x)
    return isinstance(expr, Index) and expr.expr == var(f"_probe{d}")


def permute(b: ProgramBuilder, hint: str, x: View, pos: View, *, dim: int) -> View:
    """`x` read at the positions `pos` along `dim` (`x`'s shape, `dim` of `pos`'s size there): a
    payload carried through a sort. An iota along `dim` read at the positions is the positions
    themselves (an argsort), cast to `x`'s dtype."""
    d = dim % x.rank
    if is_position(x, d):
        dt = x.dtype
        if dt is pos.dtype:
            return pos
        return View(pos.shape, dt, lambda i: tuple((g, Cast(dt, e)) for g, e in pos.at(i)))
    return _at_positions(_readable_at(b, hint, x, d, pos.shape[d]), pos, d)


__all__ = ["is_position", "order", "permute", "plain_keys"]
