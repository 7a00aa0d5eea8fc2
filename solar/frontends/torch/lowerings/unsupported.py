"""Ops solar knows and does not lower, each with the reason (the converter's error says it, on one
line with the user's source line). They are not in the lowering table, so `solar ops` does not
list them.

Searching produces data-dependent positions: the IR has no statement whose work is a provable
count for it (a binary search written as affine statements would count more work than the best
kernels do: not a lower bound; sorting and top-k are order statements: sorting.py). FFTs produce complex values, which the IR has no dtype for."""

from __future__ import annotations

import torch

aten = torch.ops.aten

_SEARCH = (
    "a binary search has no affine form whose work is a lower bound (a compare against every "
    "boundary counts more than a search does); not supported"
)
_COMPLEX = "complex tensors have no IR dtype yet; FFTs and complex views are not supported"

UNSUPPORTED: dict[object, str] = {
    aten.searchsorted.Tensor: _SEARCH,
    aten.searchsorted.Scalar: _SEARCH,
    aten.bucketize.Tensor: _SEARCH,
    aten.bucketize.Scalar: _SEARCH,
    aten._fft_r2c.default: _COMPLEX,
    aten._fft_c2r.default: _COMPLEX,
    aten._fft_c2c.default: _COMPLEX,
    aten.view_as_complex.default: _COMPLEX,
    aten.view_as_real.default: _COMPLEX,
    aten.complex.default: _COMPLEX,
    aten._weight_int4pack_mm.default: (
        "the int4 weight is in a tiled packed layout that the CUDA kernel defines and a CPU build "
        "cannot run, so no lowering can be checked against it; not supported"
    ),
    aten._convert_weight_to_int4pack.default: (
        "it repacks a weight into a CUDA-only tiled layout (a constructor-time step); not supported "
        "in forward"
    ),
    aten._weight_int4pack_mm_for_cpu.default: (
        "the int4 weight is in a blocked packed layout that PyTorch does not document; not "
        "supported yet (int8 weights: _weight_int8pack_mm is)"
    ),
    aten._convert_weight_to_int4pack_for_cpu.default: (
        "it repacks a weight into an undocumented blocked layout (a constructor-time step); not "
        "supported in forward"
    ),
    **{
        op: "no draw form whose work is a floor: the inverse transform costs a logarithm that "
        "ziggurat-style samplers avoid; not supported"
        for op in (
            aten.exponential.default,
            aten.log_normal.default,
            aten.cauchy.default,
            aten.geometric.default,
        )
    },
    aten.multinomial.default: (
        "sampling from a distribution is a data-dependent search; not supported"
    ),
}

__all__ = ["UNSUPPORTED"]
