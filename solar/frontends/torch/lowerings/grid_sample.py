"""F.grid_sample (`grid_sampler_2d`): bilinear or nearest sampling of x [N, C, H, W] at the
positions a grid [N, Ho, Wo, 2] gives, with zero or border padding and either align_corners.

The positions are data, so the samples are data-dependent loads (`x[n, c, ind(iy), ind(ix)]`).
Everything that depends only on the grid — the source coordinates, each corner's clamped index and
its weight (zero where the corner falls outside the image under zero padding) — is computed once
per output position in small temps shared by all channels, as a kernel does; per output element
the work is the weighted sum of the corners (bilinear: 4 multiplies and 3 adds). Reflection
padding and bicubic interpolation are not supported."""

from __future__ import annotations

from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import Term, add, call, cast, elementwise, loop_vars, mul, sub
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.indexing import take
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

NOTES = {
    aten.grid_sampler_2d.default: "grid_sample: the sampled image's bytes at the smallest footprint "
    "any grid gives (one element per sampled dim)"
}
MODES = {0: "bilinear", 1: "nearest"}
PADDING = {0: "zeros", 1: "border"}


def _unnormalise(g: Term, size: int, align_corners: bool) -> Term:
    """[-1, 1] -> pixel coordinates (PyTorch's grid_sampler_unnormalize)."""
    if align_corners:
        return mul(add(g, 1.0), (size - 1) / 2.0)
    return mul(sub(mul(add(g, 1.0), float(size)), 1.0), 0.5)


def _clamp(t: Term, hi: int) -> Term:
    return call(S.MIN, call(S.MAX, t, 0.0), float(hi))


def _inside(cx: Term, cy: Term, w: int, h: int) -> Term:
    return call(
        S.AND,
        call(S.AND, call(S.GE, cx, 0.0), call(S.LE, cx, float(w - 1))),
        call(S.AND, call(S.GE, cy, 0.0), call(S.LE, cy, float(h - 1))),
    )


@lower(aten.grid_sampler_2d.default)
def _grid_sampler_2d(
    ctx: LowerCtx,
    x: View,
    grid: View,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> View:
    if interpolation_mode not in MODES or padding_mode not in PADDING:
        raise SolarError(
            f"grid_sample with mode={interpolation_mode} padding_mode={padding_mode}: supported are "
            "bilinear and nearest with zeros or border padding"
        )
    b, dtype = ctx.b, ctx.dtype
    _, _, h, w = x.shape
    pos = grid.shape[:3]
    fdt = grid.dtype if grid.dtype in (DType.F32, DType.F64) else DType.F32

    def temp(name: str, dt: DType, inputs: list, fn: Any) -> View:
        return elementwise(b, f"{ctx.hint}_{name}", pos, dt, inputs, fn)

    gx, gy = views.select(grid, 3, 0), views.select(grid, 3, 1)
    fx = temp("x", fdt, [gx], lambda g: _unnormalise(cast(fdt, g), w, align_corners))
    fy = temp("y", fdt, [gy], lambda g: _unnormalise(cast(fdt, g), h, align_corners))
    if PADDING[padding_mode] == "border":
        fx = temp("xc", fdt, [fx], lambda t: _clamp(t, w - 1))
        fy = temp("yc", fdt, [fy], lambda t: _clamp(t, h - 1))
    zeros = PADDING[padding_mode] == "zeros"
    corners: list[tuple[View, View, View | None]] = []  # (index y, index x, weight)
    if MODES[interpolation_mode] == "nearest":
        rx = temp("rx", fdt, [fx], lambda t: call(S.ROUND, t))
        ry = temp("ry", fdt, [fy], lambda t: call(S.ROUND, t))
        weight = (
            temp("w", fdt, [rx, ry], lambda a, e: cast(fdt, _inside(a, e, w, h))) if zeros else None
        )
        corners.append((ry, rx, weight))
    else:
        x0 = temp("x0", fdt, [fx], lambda t: call(S.FLOOR, t))
        y0 = temp("y0", fdt, [fy], lambda t: call(S.FLOOR, t))
        tx = temp("tx", fdt, [fx, x0], sub)
        ty = temp("ty", fdt, [fy, y0], sub)
        for dy in (0, 1):
            for dx in (0, 1):

                def wt(a: Term, e: Term, p: Term, q: Term, dx: int = dx, dy: int = dy) -> Term:
                    wx = p if dx else sub(1.0, p)
                    wy = q if dy else sub(1.0, q)
                    value = mul(wx, wy)
                    if zeros:
                        value = call(
                            S.WHERE, _inside(add(a, float(dx)), add(e, float(dy)), w, h), value, 0.0
                        )
                    return value

                weight = temp(f"w{dy}{dx}", fdt, [x0, y0, tx, ty], wt)
                cx = temp(f"cx{dy}{dx}", fdt, [x0], lambda t, dx=dx: add(t, float(dx)))
                cy = temp(f"cy{dy}{dx}", fdt, [y0], lambda t, dy=dy: add(t, float(dy)))
                corners.append((cy, cx, weight))
    # clamped integer indices (an outside corner has weight 0 and reads an element in bounds)
    idx_views = []
    for k, (cy, cx, weight) in enumerate(corners):
        iy = temp(f"iy{k}", DType.I64, [cy], lambda t: cast(DType.I64, _clamp(t, h - 1)))
        ix = temp(f"ix{k}", DType.I64, [cx], lambda t: cast(DType.I64, _clamp(t, w - 1)))
        idx_views.append((iy, ix, weight))
    loops, (i_n, i_c, i_h, i_w) = loop_vars("i", ctx.shape)
    p_idx = (i_n, i_h, i_w)
    total: Term | None = None
    for iy, ix, weight in idx_views:
        # x at data-dependent rows and columns, through its view (materialised if it must be)
        corner = take(ctx, x, lambda idx, iy=iy, ix=ix: (
            idx[0], idx[1], iy.at((idx[0], idx[2], idx[3]))[0][1], ix.at((idx[0], idx[2], idx[3]))[0][1]
        ))
        sample = corner.at((i_n, i_c, i_h, i_w))
        term = sample if weight is None else mul(weight.at(p_idx), sample)
        total = term if total is None else add(total, term)
    out = b.temp(ctx.hint, ctx.shape, dtype)
    assert total is not None
    b.emit(loops, out.base, (i_n, i_c, i_h, i_w), Update.ASSIGN, cast(dtype, total))
    return out


__all__ = ["MODES", "PADDING"]
