"""Ops real models use, traced end to end (torch.export, lowering, IR passes), run in the IR
interpreter and compared with PyTorch; exact counts where the structure fixes them; the one-line
errors of the forms solar does not support. The op-by-op checks against the real ops are the
lowering cases (tests/frontends/lowering_cases/)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import solar
from solar.errors import SolarError
from solar.frontends.torch.check import check_module

torch.manual_seed(0)


class Fn(nn.Module):
    def __init__(self, fn: Callable[..., Any], *mods: nn.Module):
        super().__init__()
        self.fn, self.mods = fn, nn.ModuleList(mods)

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(self, *xs)


def r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _setitem(s: Fn, a: torch.Tensor, i: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    a = a.clone()
    a[:, i] = v
    return a


def _hf_mask(s: Fn, pad: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """GPT-2 / Llama style: causal & padding as bool tensors, then a masked fill."""
    n = scores.shape[-1]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    mask = causal[None, None] & pad[:, None, None, :].bool()
    return scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(-1)


EIN = [
    ("bij,bjk->bik", (3, 4, 5), (3, 5, 2)),
    ("i,j->ij", (3,), (4,)),
    ("ii->", (4, 4)),
    ("ii->i", (4, 4)),
    ("bij->j", (2, 3, 4)),
    ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)),
    ("bn,anm,bm->ba", (2, 3), (4, 3, 5), (2, 5)),
    ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),
    ("bhqd,bhkd->bhqk", (1, 2, 3, 4), (1, 2, 5, 4)),
]

CASES: list[tuple[str, nn.Module, tuple]] = [
    (
        "convnext_head_as_strided",
        Fn(lambda s, a: torch.flatten(F.adaptive_avg_pool2d(a.permute(0, 3, 1, 2), 1), 1)),
        (r(2, 4, 4, 6),),
    ),
    (
        "channels_last_pool",
        Fn(lambda s, a: F.adaptive_avg_pool2d(a, 1)),
        (r(2, 3, 4, 4).to(memory_format=torch.channels_last),),
    ),
    (
        "embedding_bag_fixed",
        Fn(
            lambda s, i: torch.cat([m(i) for m in s.mods], 1),
            *(nn.EmbeddingBag(10, 4, mode=m) for m in ("sum", "mean", "max")),
        ),
        (torch.randint(0, 10, (3, 4)),),
    ),
    (
        "einsum",
        Fn(
            lambda s, *xs: torch.cat(
                [
                    torch.einsum(eq, *xs[k : k + len(shapes)]).flatten()
                    for k, (eq, *shapes) in zip(EIN_OFFSETS, EIN)
                ]
            )
        ),
        tuple(r(*sh) for _, *shapes in EIN for sh in shapes),
    ),
    (
        "mha",
        Fn(
            lambda s, q, k: (
                s.mods[0](q, k, k)[0]
                + s.mods[1](q.transpose(0, 1), q.transpose(0, 1), q.transpose(0, 1))[0].transpose(
                    0, 1
                )
            ),
            nn.MultiheadAttention(8, 2, batch_first=True),
            nn.MultiheadAttention(8, 2),
        ),
        (r(2, 5, 8), r(2, 3, 8)),
    ),
    (
        "transformer_encoder_layer",
        Fn(
            lambda s, x: s.mods[0](x),
            nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
        ),
        (r(2, 5, 8),),
    ),
    (
        "pixel_shuffle",
        Fn(lambda s, a: F.pixel_unshuffle(F.pixel_shuffle(a, 2), 2) + 1),
        (r(1, 8, 3, 3),),
    ),
    (
        "interpolate",
        Fn(
            lambda s, a: torch.cat(
                [
                    F.interpolate(a, scale_factor=2, mode="nearest").flatten(),
                    F.interpolate(a, size=(5, 7), mode="nearest-exact").flatten(),
                    F.interpolate(
                        a, scale_factor=2, mode="bilinear", align_corners=False
                    ).flatten(),
                    F.interpolate(a, size=(5, 7), mode="bilinear", align_corners=True).flatten(),
                    F.interpolate(a, scale_factor=2, mode="bicubic", align_corners=False).flatten(),
                    F.interpolate(a, size=(3, 5), mode="bicubic", align_corners=True).flatten(),
                    F.interpolate(a, size=(2, 3), mode="area").flatten(),
                    F.interpolate(a[:, :, None], size=(3, 5, 6), mode="trilinear").flatten(),
                ]
            )
        ),
        (r(1, 2, 4, 4),),
    ),
    (
        "rms_lrn",
        Fn(
            lambda s, a: s.mods[0](a.transpose(1, 3)).sum() + F.local_response_norm(a, 3),
            nn.RMSNorm(3),
        ),
        (r(2, 3, 4, 4),),
    ),
    (
        "where_masked_fill_clamp",
        Fn(
            lambda s, a, lo, m: (
                torch.where(m, a, 0.0)
                + torch.where(m, 1.0, -1.0)
                + a.masked_fill(m, -2.0)
                + torch.clamp(a, lo, lo + 1)
                + torch.clamp(a, max=lo)
            )
        ),
        (r(3, 5), r(3, 5), torch.rand(3, 5) > 0.5),
    ),
    ("hf_bool_mask", Fn(_hf_mask), (torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]]), r(2, 2, 4, 4))),
    (
        "bitwise_ints",
        Fn(lambda s, a, b: ((a & b) | (a ^ 3)) + ((a << 2) >> 1)),
        (torch.randint(0, 16, (3, 4)), torch.randint(0, 16, (3, 4))),
    ),
    (
        "unfold_fold",
        Fn(
            lambda s, a: (
                F.fold(F.unfold(a, 3, padding=1, stride=2), (6, 6), 3, padding=1, stride=2)
                + a.unfold(3, 2, 2).sum(-1).repeat_interleave(2, -1)
            )
        ),
        (r(2, 3, 6, 6),),
    ),
    (
        "setitem_scatter",
        Fn(
            lambda s, a, i, v, j: (
                _setitem(s, a, i, v) + torch.zeros(3, 6).scatter_add(1, j, torch.ones(3, 2))
            )
        ),
        (r(3, 6), torch.tensor([0, 2, 5]), r(3, 3), torch.randint(0, 6, (3, 2))),
    ),
    (
        "cdist_grid_sample",
        Fn(
            lambda s, a, b, x, g: torch.cdist(a, b).sum() + F.grid_sample(x, g, align_corners=False)
        ),
        (r(30, 3), r(28, 3), r(1, 2, 4, 5), torch.rand(1, 3, 3, 2) * 2.4 - 1.2),
    ),
    (
        # torchvision RAFT samples a permuted, reshaped correlation volume: the input is a view
        "grid_sample_of_a_view",
        Fn(
            lambda s, x, g: F.grid_sample(
                x.permute(0, 3, 1, 2).reshape(2, 3, 3, 10)[:, :, 1:, :], g, mode="bilinear", align_corners=True
            )
        ),
        (r(2, 5, 6, 3), torch.rand(2, 4, 3, 2) * 2.4 - 1.2),
    ),
    (
        "int_mm",
        Fn(lambda s, a, b: torch._int_mm(a, b)),
        (
            torch.randint(-8, 8, (32, 16), dtype=torch.int8),
            torch.randint(-8, 8, (16, 8), dtype=torch.int8),
        ),
    ),
]
EIN_OFFSETS = []
_k = 0
for _eq, *_shapes in EIN:
    EIN_OFFSETS.append(_k)
    _k += len(_shapes)


@pytest.mark.parametrize("name,module,inputs", CASES, ids=[c[0] for c in CASES])
def test_program_matches_pytorch(name: str, module: nn.Module, inputs: tuple) -> None:
    result = check_module(module, inputs)
    assert result.checks and not result.unchecked, [c.note for c in result.checks]
    assert result.ok, [(c.what, c.error, c.tolerance) for c in result.checks]


# ---- exact counts --------------------------------------------------------------------------------


def _totals(fn: Callable[..., Any], *inputs: torch.Tensor) -> tuple[int, int, float]:
    t = solar.analyze(Fn(fn), inputs, arch="H200", writeback=False).totals
    return t.flops, t.contraction_flops, t.dram_bytes


def test_pixel_shuffle_moves_bytes_only() -> None:
    x = r(2, 8, 3, 5)
    assert _totals(lambda s, a: F.pixel_shuffle(a, 2), x) == (0, 0, 2 * x.numel() * 4)


def test_bitwise_and_is_one_bit_op_per_element() -> None:
    a, b = torch.rand(64, 64) > 0.5, torch.rand(64, 64) > 0.5
    assert _totals(lambda s, x, y: x & y, a, b) == (4096, 0, 3 * 4096)
    i = torch.randint(0, 9, (64,), dtype=torch.int32)
    assert _totals(lambda s, x, y: (x & y) >> 1, i, i + 1) == (128, 0, 3 * 64 * 4)


def test_random_draws_cost_bytes_and_one_op_per_element() -> None:
    x = r(64, 64)
    assert _totals(lambda s, a: a + torch.randn(64, 64), x) == (2 * 4096, 0, 2 * 4096 * 4)
    # uniform_(lo, hi): the draw, one multiply and one add per element; the bytes written only
    assert _totals(lambda s, a: torch.empty(64, 64).uniform_(-1, 1) + a, x) == (
        4 * 4096,
        0,
        2 * 4096 * 4,
    )


def test_nearest_upsample_is_an_index_map() -> None:
    x = r(1, 3, 4, 5)
    assert _totals(lambda s, a: F.interpolate(a, scale_factor=2), x) == (0, 0, 5 * 60 * 4)


def test_scatter_add_counts_one_add_per_index() -> None:
    j, v = torch.randint(0, 6, (4, 3)), r(4, 3)
    # 12 accumulations into a zero output; bytes: index (int64) + values + output
    assert _totals(lambda s, i, x: torch.zeros(4, 6).scatter_add(1, i, x), j, v) == (
        12,
        0,
        12 * 8 + 12 * 4 + 24 * 4,
    )


def test_int_mm_is_an_int8_contraction() -> None:
    a = torch.randint(-8, 8, (32, 64), dtype=torch.int8)
    b = torch.randint(-8, 8, (64, 16), dtype=torch.int8)
    assert _totals(lambda s, x, y: torch._int_mm(x, y), a, b) == (2 * 32 * 16 * 64,) * 2 + (
        32 * 64 + 64 * 16 + 32 * 16 * 4,
    )


def test_cdist_is_a_gemm() -> None:
    _, macs, _ = _totals(lambda s, a, b: torch.cdist(a, b), r(30, 8), r(28, 8))
    assert macs == 2 * 30 * 28 * 8


# ---- what is not supported: one line each -------------------------------------------------------


@pytest.mark.parametrize(
    "fn,inputs,match",
    [
        (
            lambda s, a: torch.unique(a, return_inverse=True)[1].float(),
            (torch.randint(0, 3, (5,)),),
            r"unique with return_inverse=True: the inverse indices .* not supported",
        ),
        (
            lambda s, a: torch.bincount(a, minlength=4).float(),
            (torch.randint(0, 3, (5,)),),
            r"bincount.* at the least data-dependent size: its values depend on the data",
        ),
        (lambda s, a, b: torch.searchsorted(a, b), (torch.arange(5.0), r(3)), r"binary search"),
        (
            lambda s, a: torch.fft.rfft(a).abs(),
            (r(3, 8),),
            r"_fft_r2c.*complex tensors have no IR dtype",
        ),
        (
            lambda s, a, m, v: a.index_put((m,), v),
            (r(3, 4), torch.rand(3, 4) > 0.5, r(6)),
            r"boolean mask is supported for `x\[mask\] = scalar` only",
        ),
        (
            lambda s, x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False),
            (r(1, 2, 4, 5), r(1, 3, 3, 2)),
            r"grid_sample with mode=0 padding_mode=2",
        ),
        (
            lambda s, a: a[:, ::2].as_strided((2, 2), (2, 4)),
            (r(4, 8),),
            r"as_strided of a tensor with strides \(8, 2\)",
        ),
    ],
)
def test_unsupported_forms_fail_in_one_line(
    fn: Callable[..., Any], inputs: tuple, match: str
) -> None:
    with pytest.raises(SolarError, match=match) as info:
        solar.analyze(Fn(fn), inputs, arch="H200")
    assert "\n" not in str(info.value)


def test_linear_interpolate_is_three_flops_per_lerp() -> None:
    # 4 -> 8, align_corners: source i*3/7; outputs 0..6 interpolate (3 FLOPs), output 7 is the
    # last element (a copy); plus one multiply per weight element the interpolations read (2 x 7)
    x = r(2, 3, 4)
    fn = lambda s, a: F.interpolate(a, size=8, mode="linear", align_corners=True)
    assert _totals(fn, x) == (6 * 7 * 3 + 2 * 7, 0, (24 + 48) * 4)


def test_bilinear_picks_the_cheaper_schedule() -> None:
    from fractions import Fraction

    from solar.frontends.torch.lowerings.resample import pass_schedule

    up = [(2, 16, 32, Fraction(1, 2)), (3, 16, 32, Fraction(1, 2))]
    assert pass_schedule((2, 3, 16, 16), up) == [[up[0]], [up[1]]]  # separable: 1.5 lerps per output
    down = [(2, 16, 5, Fraction(16, 5)), (3, 16, 5, Fraction(16, 5))]
    assert pass_schedule((2, 3, 16, 16), down) == [down]  # all at once: 3 lerps per output
