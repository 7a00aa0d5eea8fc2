"""The direct path's rewrites of the ops an attention mask is built from (HF transformers' causal and
padding masks and cache positions: arange, new_ones, `&`, to(device), diff), each the exact decomposition
`run_decompositions` produces for it (torch._decomp's arange_default, torch._refs.new_ones, ATen's
to_impl and diff_helper), for the argument forms it accepts; any other form raises Unsupported and
the caller falls back to the full re-trace. Split from solar.frontends.torch.direct, which holds the
rest of the table."""

from __future__ import annotations

from typing import Any, Callable

import torch

from solar.frontends.torch.direct_graph import Unsupported, value_of

aten = torch.ops.aten


def _arange(e, end, dtype=None, layout=torch.strided, device=None, pin_memory=False):
    return _arange_start(e, 0, end, dtype, layout, device, pin_memory)


def _arange_start(e, start, end, dtype=None, layout=torch.strided, device=None, pin_memory=False):
    kwargs = {"dtype": dtype, "layout": layout, "device": device, "pin_memory": pin_memory}
    return e.call(aten.arange.start_step, (start, end, 1), kwargs)


def _new_ones(e, x, size, dtype=None, layout=None, device=None, pin_memory=False):
    xv = value_of(x)
    dtype = xv.dtype if dtype is None else dtype
    kwargs = {
        "dtype": dtype,
        "layout": xv.layout if layout is None else layout,
        "device": xv.device if device is None else device,
        "pin_memory": pin_memory,
    }
    return e.call(aten.full.default, (size, True if dtype == torch.bool else 1), kwargs)


def _binary(op: Any) -> Callable:
    def rule(e, a, b):
        return e.call(op, (a, b))

    return rule


def _to(e, x, dtype=None, layout=None, device=None, pin_memory=None, copy=False, memory_format=None, both=False):
    """ATen's to_impl: x itself where nothing changes, else one _to_copy (same device only)."""
    xv = value_of(x)
    if copy or memory_format is not None or (device is not None and torch.device(device) != xv.device):
        raise Unsupported  # a forced copy, a memory format, another device
    if (dtype is None or dtype == xv.dtype) and (layout is None or layout == xv.layout):
        return x
    kwargs = {"dtype": dtype, "layout": layout, "device": device, "pin_memory": pin_memory}
    return e.call(aten._to_copy.default, (x,), kwargs)


def _to_device(e, x, device, dtype, non_blocking=False, copy=False, memory_format=None):
    if non_blocking:
        raise Unsupported
    return _to(e, x, dtype=dtype, device=device, copy=copy, memory_format=memory_format)


def _to_dtype_layout(
    e, x, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False, copy=False, memory_format=None
):
    if non_blocking:
        raise Unsupported
    return _to(e, x, dtype, layout, device, pin_memory, copy, memory_format)


def _diff(e, x, n=1, dim=-1, prepend=None, append=None):
    """diff_helper for one step: the difference of the two overlapping slices of cat(prepend, x)."""
    if n != 1 or append is not None or value_of(x).dtype == torch.bool:
        raise Unsupported  # repeated differences, an appended tensor, logical_xor for booleans
    if prepend is not None:
        if not isinstance(prepend, torch.fx.Node) or value_of(prepend).dim() != value_of(x).dim():
            raise Unsupported
        x = e.call(aten.cat.default, ([prepend, x], dim))
    length = int(value_of(x).shape[dim])
    first = e.call(aten.slice.Tensor, (x, dim, 0, length - 1))
    second = e.call(aten.slice.Tensor, (x, dim, 1, length))
    return e.call(aten.sub.Tensor, (second, first))


MASK_REWRITES: dict[Any, Callable] = {
    aten.arange.default: _arange,
    aten.arange.start: _arange_start,
    aten.new_ones.default: _new_ones,
    aten.__and__.Tensor: _binary(aten.bitwise_and.Tensor),
    aten.__or__.Tensor: _binary(aten.bitwise_or.Tensor),
    aten.to.device: _to_device,
    aten.to.dtype_layout: _to_dtype_layout,
    aten.diff.default: _diff,
}
