"""Strided views as index maps: `Tensor.unfold` (sliding windows along one dim) and
`as_strided` where it is a plain strided view of a tensor with a dense layout (what decompositions
emit for a permuted or channels-last tensor: ConvNeXt's pooled head). No statements: a consumer
reads the source directly.

as_strided addresses the source's *storage*: output element o is storage position
offset + sum(o_k * stride_k). When the source's own layout is dense (its strides are a permutation
of contiguous strides, as the traced metadata says; a tensor without metadata is taken as
contiguous), each storage position is exactly one source element, found by floor-division and
modulus; the statement builder simplifies these away when the strides match the source's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine

aten = torch.ops.aten

Index = tuple[Affine, ...]


@lower(aten.unfold.default)
def _unfold(ctx: LowerCtx, x: View, dim: int, size: int, step: int) -> View:
    """out[..., w, ..., k] = x[..., w*step + k, ...] (the window index replaces `dim`, the offset
    in the window is a new last dim)."""
    d = dim % max(x.rank, 1)
    if x.rank == 0:
        return View(tuple(ctx.shape), x.dtype, lambda idx: x.at(()))

    def at(idx: Index) -> Any:
        src = list(idx[:-1])
        src[d] = idx[d] * step + idx[-1]
        return x.at(tuple(src))

    return views.indexed(ctx.shape, x.dtype, at)


def traced_layout(ctx: LowerCtx, x: View) -> tuple[tuple[int, ...], int]:
    """Strides and storage offset of the op's first argument as traced (contiguous when there is no
    metadata)."""
    args = getattr(ctx.node, "args", ())
    val = args[0].meta.get("val") if args and isinstance(args[0], torch.fx.Node) else None
    if isinstance(val, torch.Tensor):
        return tuple(int(s) for s in val.stride()), int(val.storage_offset())
    strides, acc = [], 1
    for s in reversed(x.shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides)), 0


def _dense_order(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """True when the dims of size > 1, sorted by decreasing stride, have contiguous strides."""
    dims = sorted((d for d, n in enumerate(shape) if n > 1), key=lambda d: -strides[d])
    acc = 1
    for d in reversed(dims):
        if strides[d] != acc:
            return False
        acc *= shape[d]
    return True


@lower(aten.as_strided.default)
def _as_strided(
    ctx: LowerCtx,
    x: View,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> View:
    x_strides, x_offset = traced_layout(ctx, x)
    if not _dense_order(x.shape, x_strides):
        raise SolarError(
            f"as_strided of a tensor with strides {x_strides} (shape {x.shape}): only sources "
            "with a dense layout are supported"
        )
    offset = x_offset if storage_offset is None else int(storage_offset)
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    if any(s < 0 for s in stride):
        raise SolarError(f"as_strided with negative strides {tuple(stride)} is not supported")
    lo = offset - x_offset
    hi = lo + sum((n - 1) * s for n, s in zip(size, stride) if n > 0)
    if min(size, default=1) > 0 and (lo < 0 or hi >= x.numel):
        raise SolarError(
            f"as_strided(size={tuple(size)}, stride={tuple(stride)}, offset={offset}) reaches "
            f"storage outside its source (shape {x.shape}, strides {x_strides}); not supported"
        )

    def at(idx: Index) -> Any:
        p = Affine(const=lo)
        for i, s in zip(idx, stride):
            p = p + i * s
        src = tuple(
            Affine() if n == 1 else (p // s) % n if s * n < x.numel else p // s
            for n, s in zip(x.shape, x_strides)
        )
        return x.at(src)

    return views.indexed(size, x.dtype, at)


__all__ = ["traced_layout"]
