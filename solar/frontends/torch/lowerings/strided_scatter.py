"""What autograd emits for the backward of strided views: `as_strided_scatter` (a copy of the base
with a strided window of its storage replaced), and `new_empty` / `new_empty_strided` (the buffer
a gradient is copied into, whose values are undefined and read as zeros).

as_strided_scatter addresses the base's storage, which must have a dense layout (as the traced
metadata says; contiguous without metadata). A window that covers the whole storage once is the
source seen through the inverse index map (no statements); any other window of non-overlapping
strides is a copy of the base with the source stored over the window's elements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import copy, loop_vars
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.torch.lowerings.strided import traced_layout
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

Index = tuple[Affine, ...]


@lower(aten.new_empty.default, aten.new_empty_strided.default)
def _new_empty(ctx: LowerCtx, x: View, *args: Any, **kwargs: Any) -> View:
    return views.constant(False if ctx.dtype is DType.BOOL else 0, ctx.shape, ctx.dtype)


def _nested(size: Sequence[int], stride: Sequence[int]) -> list[int] | None:
    """The dims of size > 1 by decreasing stride when each stride exceeds the reach of all smaller
    ones (every storage position is at most one element), else None."""
    dims = sorted((d for d, n in enumerate(size) if n > 1), key=lambda d: -stride[d])
    reach = 0
    for d in reversed(dims):
        if stride[d] <= reach:
            return None
        reach += (size[d] - 1) * stride[d]
    return dims


def _element(position: Affine, shape: Sequence[int], strides: Sequence[int], numel: int) -> Index:
    """The index of the element at a storage position of a dense layout."""
    return tuple(
        Affine() if n == 1 else (position // s) % n if s * n < numel else position // s
        for n, s in zip(shape, strides)
    )


@lower(aten.as_strided_scatter.default)
def _as_strided_scatter(
    ctx: LowerCtx,
    x: View,
    src: View,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> View:
    x_strides, x_offset = traced_layout(ctx, x)
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    offset = x_offset if storage_offset is None else int(storage_offset)
    dims = _nested(size, stride)
    if _nested(x.shape, x_strides) is None or dims is None or any(s < 0 for s in stride):
        raise SolarError(
            f"as_strided_scatter(size={tuple(size)}, stride={tuple(stride)}) of a base with "
            f"strides {x_strides} (shape {x.shape}): only non-overlapping windows of a base with "
            "a dense layout are supported"
        )
    lo = offset - x_offset
    hi = lo + sum((n - 1) * s for n, s in zip(size, stride))
    if min(size, default=1) > 0 and (lo < 0 or hi >= x.numel):
        raise SolarError(
            f"as_strided_scatter(size={tuple(size)}, stride={tuple(stride)}, offset={offset}) "
            f"reaches storage outside its base (shape {x.shape}, strides {x_strides})"
        )
    if lo == 0 and src.numel == x.numel:
        # the window is every storage position once: out[q] = src[the window index at q's position]

        def at(q: Index) -> Any:
            r = Affine()
            for e, s in zip(q, x_strides):
                r = r + e * s
            o = [Affine()] * len(size)
            for k, d in enumerate(dims):
                part = r if k == 0 else r % stride[dims[k - 1]]
                o[d] = part // stride[d]
            return src.at(tuple(o))

        return views.indexed(x.shape, x.dtype, at)
    out = copy(ctx.b, ctx.hint, x, ctx.dtype)
    loops, o = loop_vars("i", size)
    position = Affine(const=lo)
    for e, s in zip(o, stride):
        position = position + e * s
    target = _element(position, x.shape, x_strides, x.numel)
    ctx.b.emit(loops, out.base, target, Update.ASSIGN, src.at(o))
    return out


__all__: list[str] = []
