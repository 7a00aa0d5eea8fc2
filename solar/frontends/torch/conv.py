"""Convolution (direct and transposed, any stride/padding/dilation/groups) as one guarded
contraction: padding positions are excluded by guards, groups by index arithmetic, so the work
counted is exactly the multiply-adds a convolution must do (never a dense over-count)."""

from __future__ import annotations

from typing import Any, Sequence

from solar.frontends.builder import contract
from solar.frontends.views import View
from solar.ir.affine import Affine, Constraint, ge, lt


def convolution(
    ctx: Any, x: View, w: View, bias: View | None, stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], transposed: bool, groups: int,
) -> View:
    out_shape = ctx.shape
    nd = x.rank - 2
    stride = per_dim(stride, nd)
    padding = per_dim(padding, nd)
    dilation = per_dim(dilation, nd)
    kernel = w.shape[2:]
    spatial = x.shape[2:]
    if transposed:
        cin_g = x.shape[1] // groups
        cout_g = w.shape[1]
    else:
        cin_g = w.shape[1]
        cout_g = w.shape[0] // groups

    def positions(o: tuple[Affine, ...], r: tuple[Affine, ...]) -> list[tuple[Affine, list[Constraint]]]:
        """Input position and guards per spatial dim."""
        out = []
        for d in range(nd):
            os_, k = o[2 + d], r[1 + d]
            if not transposed:
                pos = os_ * stride[d] + k * dilation[d] - padding[d]
                out.append((pos, [ge(pos, 0), lt(pos, spatial[d])]))
            else:
                num = os_ + padding[d] - k * dilation[d]
                guards = [ge(num, 0), lt(num, (spatial[d] - 1) * stride[d] + 1)]
                if stride[d] > 1:
                    guards.append(Constraint(num % stride[d], equality=True))
                out.append((num // stride[d], guards))
        return out

    def channel_in(o: tuple[Affine, ...], r: tuple[Affine, ...]) -> Affine:
        return (o[1] // cout_g) * cin_g + r[0]

    def x_at(o, r):
        pos = [p for p, _ in positions(o, r)]
        return x.at((o[0], channel_in(o, r), *pos))

    def w_at(o, r):
        if transposed:
            return w.at((channel_in(o, r), o[1] % cout_g, *r[1:]))
        return w.at((o[1], r[0], *r[1:]))

    def guards(o, r):
        return [g for _, gs in positions(o, r) for g in gs]

    init = None
    if bias is not None:
        init = lambda o: bias.at((o[1],))  # noqa: E731
    return contract(
        ctx.b, ctx.hint, out_shape, ctx.dtype, (cin_g, *kernel), x_at, w_at, init=init, guards=guards
    )


def per_dim(values: Sequence[int] | int, nd: int) -> list[int]:
    if isinstance(values, int):
        return [values] * nd
    values = list(values)
    return values * nd if len(values) == 1 else values
