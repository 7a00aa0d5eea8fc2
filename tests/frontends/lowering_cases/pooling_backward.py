"""Cases for solar/frontends/torch/lowerings/pooling_backward.py: the forward cases' windows
(padding, stride, dilation, ceil_mode, count_include_pad both ways, divisor_override, adaptive
windows that divide the input and that overlap, an unbatched input). A max pooling's saved indices
are the forward's on a fixed input: any valid indices will do, the op only scatters to them."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten


def _max(forward: Any, shape: tuple[int, ...], *params: Any) -> tuple[tuple, dict]:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(7))
    out, idx = forward(x, *params)
    if forward in (aten.adaptive_max_pool2d.default, aten.adaptive_max_pool3d.default):
        return (F(*out.shape), F(*shape), idx), {}
    full = list(params) + [[], [0], [1], False][len(params) - 1 :]
    return (F(*out.shape), F(*shape), *full, idx), {}


def _avg(forward: Any, shape: tuple[int, ...], *params: Any) -> tuple[tuple, dict]:
    out = forward(torch.empty(shape, device="meta"), *params)
    if forward in (aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default):
        return (F(*out.shape), F(*shape)), {}
    full = list(params) + [[], [0], False, True, None][len(params) - 1 :]
    return (F(*out.shape), F(*shape), *full), {}


MP2, MP3 = aten.max_pool2d_with_indices.default, aten.max_pool3d_with_indices.default
AP2, AP3 = aten.avg_pool2d.default, aten.avg_pool3d.default
AMP2, AMP3 = aten.adaptive_max_pool2d.default, aten.adaptive_max_pool3d.default
AAP2, AAP3 = aten._adaptive_avg_pool2d.default, aten._adaptive_avg_pool3d.default

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.max_pool2d_with_indices_backward.default: [
        _max(MP2, (2, 3, 9, 9), [3, 3], [2, 2], [1, 1], [1, 1], True),
        _max(MP2, (1, 2, 8, 7), [2, 3], [], [0, 1]),
        _max(MP2, (1, 2, 11, 10), [3, 2], [2, 3], [1, 1], [2, 3], True),
        _max(MP2, (3, 7, 7), [2, 2], [2, 2]),
        _max(MP2, (1, 4, 16, 16), [3, 3], [2, 2], [1, 1]),  # ResNet's stem pooling
    ],
    aten.max_pool3d_with_indices_backward.default: [
        _max(MP3, (1, 2, 5, 6, 7), [2, 3, 2], [2, 2, 1], [1, 1, 0], [1, 1, 2], True),
    ],
    aten.avg_pool2d_backward.default: [
        _avg(AP2, (2, 3, 9, 9), [3, 3], [2, 2], [1, 1], True, False),
        _avg(AP2, (2, 3, 9, 9), [3, 3], [2, 2], [1, 1], True, True),
        _avg(AP2, (1, 2, 8, 7), [2, 3], [1, 2], [1, 0]),
        _avg(AP2, (1, 2, 8, 7), [3, 3], [2, 2], [1, 1], False, True, 5),
        _avg(AP2, (1, 2, 10, 10), [4, 4], [4, 4]),
        _avg(AP2, (1, 4, 8, 8), [2, 2], [2, 2]),  # DenseNet's transitions
    ],
    aten.avg_pool3d_backward.default: [
        _avg(AP3, (1, 2, 5, 6, 7), [2, 3, 3], [2, 2, 2], [1, 1, 1], True, False),
        _avg(AP3, (1, 2, 4, 4, 4), [2, 2, 2]),
    ],
    aten._adaptive_avg_pool2d_backward.default: [
        _avg(AAP2, (2, 3, 8, 8), [4, 4]),
        _avg(AAP2, (2, 3, 7, 10), [3, 4]),
        _avg(AAP2, (1, 2, 5, 5), [7, 7]),
        _avg(AAP2, (1, 4, 2, 2), [1, 1]),
    ],
    aten._adaptive_avg_pool3d_backward.default: [_avg(AAP3, (1, 2, 5, 6, 4), [2, 3, 4])],
    aten.adaptive_max_pool2d_backward.default: [
        _max(AMP2, (2, 3, 7, 10), [3, 4]),
        _max(AMP2, (1, 2, 8, 8), [2, 2]),
        _max(AMP2, (1, 2, 3, 3), [5, 4]),
    ],
    aten.adaptive_max_pool3d_backward.default: [_max(AMP3, (1, 2, 5, 6, 4), [2, 3, 3])],
}
