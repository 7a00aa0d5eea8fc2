"""Ops whose output size depends on the data (nonzero, masked_select, boolean-mask indexing,
unique, bincount, repeat_interleave with tensor repeats), lowered at the size the bound takes for
them: the least the program admits, 0 rows (solar.frontends.torch.datasizes). The input that
decides the size is read once, into the size itself (a scalar output of the program: the size
leaves the kernel that finds it); the rows, none at that size, cost nothing."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import call, cast, reduce
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.nodes import Role
from solar.ir.scalar_ops import ScalarOp, Update

aten = torch.ops.aten

NOTES = {
    op: "data-dependent output sizes (nonzero, masked_select, x[mask], unique, bincount, "
    "repeat_interleave): the tensor that decides the size is read once and the size is written "
    "as a scalar; the rows are priced at the size the bound takes (see data-dependent sizes)"
    for op in (aten.nonzero.default, aten.masked_select.default, aten._unique2.default,
               aten.unique_dim.default, aten.unique_consecutive.default, aten.bincount.default,
               aten.repeat_interleave.Tensor)
}

# How each op's size follows from the tensor that decides it: the reduction that computes it and
# the value each element contributes.
Contribution = Callable[[Any], Any]
_NONZERO: tuple[Update, Contribution] = (Update.ADD, lambda t: cast(DType.I64, call(ScalarOp.NE, t, 0)))
_SUM: tuple[Update, Contribution] = (Update.ADD, lambda t: cast(DType.I64, t))
_LARGEST: tuple[Update, Contribution] = (Update.MAX, lambda t: cast(DType.I64, t))


def size_of(ctx: LowerCtx, decides: View, how: tuple[Update, Contribution]) -> None:
    """The data-dependent size computed from `decides` (every element read once), a program output.
    A boolean mask's elements are counted as they are (0 or 1: one add each, no compare)."""
    update, contribution = _SUM if how is _NONZERO and decides.dtype is DType.BOOL else how
    size = reduce(ctx.b, f"{ctx.hint}_size", decides, list(range(decides.rank)), False, update,
                  DType.I64, value=lambda t, idx: contribution(t))
    ctx.b.set_role(size.base, Role.OUTPUT)


def empty(ctx: LowerCtx, shape: Sequence[int], dtype: DType) -> View:
    """An output with no element at the size the bound takes."""
    if 0 not in shape:
        raise SolarError(
            f"{ctx.node.target} with an output of {tuple(shape)} elements at the least data-dependent "
            "size: its values depend on the data; not supported"
        )
    return views.constant(0, shape, dtype)


@lower(aten.nonzero.default)
def _nonzero(ctx: LowerCtx, x: View) -> View:
    size_of(ctx, x, _NONZERO)
    return empty(ctx, ctx.shape, ctx.dtype)


@lower(aten.masked_select.default)
def _masked_select(ctx: LowerCtx, x: View, mask: View) -> View:
    size_of(ctx, mask, _NONZERO)
    return empty(ctx, ctx.shape, ctx.dtype)


def mask_index(ctx: LowerCtx, x: View, masks: Sequence[View]) -> View:
    """`x[..., mask, ...]` (index.Tensor with a boolean index): the rows the masks select."""
    for m in masks:
        size_of(ctx, m, _NONZERO)
    return empty(ctx, ctx.shape, ctx.dtype)


def _unique(ctx: LowerCtx, x: View, return_inverse: bool) -> tuple[View, ...]:
    if return_inverse:
        raise SolarError(
            "unique with return_inverse=True: the inverse indices have the input's size and "
            "values that depend on the data; not supported"
        )
    size_of(ctx, x, _NONZERO)
    return tuple(empty(ctx, *ctx.meta(k)) for k in range(len(ctx.val)))


@lower(aten._unique2.default)
def _unique2(ctx: LowerCtx, x: View, sorted: bool = True, return_inverse: bool = False,
             return_counts: bool = False) -> tuple[View, ...]:
    return _unique(ctx, x, return_inverse)


@lower(aten.unique_dim.default)
def _unique_dim(ctx: LowerCtx, x: View, dim: int, sorted: bool = True, return_inverse: bool = False,
                return_counts: bool = False) -> tuple[View, ...]:
    return _unique(ctx, x, return_inverse)


@lower(aten.unique_consecutive.default)
def _unique_consecutive(ctx: LowerCtx, x: View, return_inverse: bool = False,
                        return_counts: bool = False, dim: int | None = None) -> tuple[View, ...]:
    return _unique(ctx, x, return_inverse)


@lower(aten.bincount.default)
def _bincount(ctx: LowerCtx, x: View, weights: View | None = None, minlength: int = 0) -> View:
    size_of(ctx, x, _LARGEST)
    return empty(ctx, ctx.shape, ctx.dtype)


@lower(aten.repeat_interleave.Tensor)
def _repeat_interleave(ctx: LowerCtx, repeats: View, output_size: int | None = None) -> View:
    size_of(ctx, repeats, _SUM)
    return empty(ctx, ctx.shape, ctx.dtype)


__all__: list[str] = []
