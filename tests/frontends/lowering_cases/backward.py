"""Cases for solar/frontends/torch/lowerings/backward.py (each runs the real backward op)."""

from __future__ import annotations

from typing import Any

import torch

from tests.frontends.lowering_cases import F

aten = torch.ops.aten
ALL = [True, True, True]

# Masked attention (attn_mask is a keyword tensor, which this table cannot feed) is checked through
# whole training steps in tests/frontends/test_torch_backward.py.
CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.convolution_backward.default: [
        # strided, padded, grouped 2-D
        (
            (
                F(2, 8, 5, 5),
                F(2, 4, 9, 9),
                F(8, 2, 3, 3),
                [8],
                [2, 2],
                [1, 1],
                [1, 1],
                False,
                [0, 0],
                2,
                ALL,
            ),
            {},
        ),
        # dilated, rectangular kernel
        (
            (
                F(1, 4, 5, 2),
                F(1, 3, 7, 6),
                F(4, 3, 2, 3),
                [4],
                [1, 1],
                [0, 0],
                [2, 2],
                False,
                [0, 0],
                1,
                ALL,
            ),
            {},
        ),
        # 1-D, stride 3 with padding, grouped
        ((F(2, 6, 4), F(2, 4, 10), F(6, 2, 3), [6], [3], [2], [1], False, [0], 2, ALL), {}),
        # transposed: stride 2, padding 1, output_padding 1, grouped (weight [in, out / groups, k])
        (
            (
                F(2, 6, 10, 10),
                F(2, 4, 5, 5),
                F(4, 3, 3, 3),
                [6],
                [2, 2],
                [1, 1],
                [1, 1],
                True,
                [1, 1],
                2,
                ALL,
            ),
            {},
        ),
        # transposed 1-D, dilated
        ((F(1, 2, 14), F(1, 3, 4), F(3, 2, 3), [2], [3], [0], [2], True, [0], 1, ALL), {}),
        # depthwise
        (
            (
                F(1, 4, 4, 4),
                F(1, 4, 8, 8),
                F(4, 1, 3, 3),
                [4],
                [2, 2],
                [1, 1],
                [1, 1],
                False,
                [0, 0],
                4,
                ALL,
            ),
            {},
        ),
    ],
    aten._scaled_dot_product_flash_attention_for_cpu.default: [
        ((F(2, 3, 5, 4), F(2, 3, 6, 4), F(2, 3, 6, 4)), {}),
        ((F(2, 2, 6, 4), F(2, 2, 6, 4), F(2, 2, 6, 4)), {"is_causal": True}),
        ((F(1, 2, 5, 4), F(1, 2, 7, 4), F(1, 2, 7, 4), 0.0, True), {"scale": 0.7}),
        ((F(2, 4, 5, 4), F(2, 2, 5, 4), F(2, 2, 5, 4), 0.0, True), {}),  # grouped-query heads
    ],
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default: [
        # grad_out, q, k, v, out, logsumexp, dropout_p, is_causal
        (
            (
                F(2, 3, 5, 4),
                F(2, 3, 5, 4),
                F(2, 3, 6, 4),
                F(2, 3, 6, 4),
                F(2, 3, 5, 4),
                F(2, 3, 5),
                0.0,
                False,
            ),
            {},
        ),
        (
            (
                F(2, 2, 6, 4),
                F(2, 2, 6, 4),
                F(2, 2, 6, 4),
                F(2, 2, 6, 4),
                F(2, 2, 6, 4),
                F(2, 2, 6),
                0.0,
                True,
            ),
            {},
        ),
        (
            (
                F(1, 2, 5, 4),
                F(1, 2, 5, 4),
                F(1, 2, 7, 4),
                F(1, 2, 7, 4),
                F(1, 2, 5, 4),
                F(1, 2, 5),
                0.0,
                True,
            ),
            {"scale": 0.7},
        ),
        (  # grouped-query heads (4 query heads, 2 key heads), causal
            (
                F(2, 4, 5, 4),
                F(2, 4, 5, 4),
                F(2, 2, 6, 4),
                F(2, 2, 6, 4),
                F(2, 4, 5, 4),
                F(2, 4, 5),
                0.0,
                True,
            ),
            {},
        ),
    ],
}
