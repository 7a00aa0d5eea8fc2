"""Programs whose sizes depend on the data: each analyses, names its data-dependent sizes in the
assumptions, prices them at the least size (exact counts at 0 rows), and is never above the same
program with the data-dependent part replaced by the dense computation it can at most be."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import solar
from solar.errors import UnsupportedOpError
from solar.frontends.torch.check import check_module
from solar.frontends.torch.datasizes import DataSize, describe

T, H, FFN, E, K = 64, 32, 48, 4, 2


class Fn(nn.Module):
    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


class MoE(nn.Module):
    """Top-2 of 4 experts, dispatched by `style`: "where" (torch.where on the top-k ids, x[token],
    index_add_), "one_hot" (as older model files: a one_hot expert mask, torch.where on it,
    x[None, token].reshape), or "dense": every expert on every token, weighted by its routing
    weight (0 where the expert is not picked), the most work either dispatch can be."""

    def __init__(self, style: str) -> None:
        super().__init__()
        self.style = style
        self.router = nn.Linear(H, E, bias=False)
        self.up = nn.ModuleList(nn.Linear(H, FFN, bias=False) for _ in range(E))
        self.down = nn.ModuleList(nn.Linear(FFN, H, bias=False) for _ in range(E))

    def expert(self, e: int, x: torch.Tensor) -> torch.Tensor:
        return self.down[e](F.silu(self.up[e](x)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top_w, top_i = torch.topk(F.softmax(self.router(x), dim=-1), K, dim=-1)
        out = torch.zeros_like(x)
        mask = F.one_hot(top_i, num_classes=E).permute(2, 1, 0)
        for e in range(E):
            if self.style == "dense":
                out = out + self.expert(e, x) * (top_w * (top_i == e)).sum(-1, keepdim=True)
            elif self.style == "where":
                token, slot = torch.where(top_i == e)
                out.index_add_(0, token, self.expert(e, x[token]) * top_w[token, slot, None])
            else:
                slot, token = torch.where(mask[e])
                y = self.expert(e, x[None, token].reshape(-1, H)) * top_w[token, slot, None]
                out.index_add_(0, token, y)
        return out


def x8() -> torch.Tensor:
    return torch.randn(8, 4)


def pack_unpack(x: torch.Tensor) -> torch.Tensor:
    """The rows a mask picks, computed on, written back into a zero tensor (out[mask] = rows)."""
    mask = x[:, 0] > 0
    out = torch.zeros_like(x)
    out[mask] = x[mask] * 2
    return out


def ints() -> torch.Tensor:
    return torch.randint(0, 3, (16,))


# name: (data-dependent program, its dense counterpart, inputs, sizes named, (flops, bytes) at 0
# rows: the compare that makes a mask, one add per element counting it (a compare and an add for a
# non-boolean input, the largest value for bincount), the input read and the size written, 8 bytes)
CASES: dict[str, tuple[nn.Module, nn.Module, Callable[[], tuple], list[str], tuple[int, int] | None]] = {
    "moe_nonzero_index_add": (MoE("where"), MoE("dense"), lambda: (torch.randn(T, H),),
                              ["u0, u1, u2, u3 = rows of nonzero at test_datasizes.py:",
                               "each 0 ≤ u ≤ 128; bound at the least (u0, u1, u2, u3 = 0 each)"], None),
    "moe_one_hot_where": (MoE("one_hot"), MoE("dense"), lambda: (torch.randn(T, H),),
                          ["u0, u1, u2, u3 = rows of nonzero at test_datasizes.py:",
                           "each 0 ≤ u ≤ 128; bound at the least (u0, u1, u2, u3 = 0 each)"], None),
    "masked_select": (Fn(lambda x: torch.masked_select(x, x > 0) * 2),
                      Fn(lambda x: torch.where(x > 0, x, 0).flatten() * 2), lambda: (x8(),),
                      ["u0 = rows of masked_select", "0 ≤ u0 ≤ 32"], (2 * 32, 32 * 4 + 8)),
    "mask_index": (Fn(lambda x: x[x[:, 0] > 0] * 2),
                   Fn(lambda x: x * (x[:, :1] > 0) * 2), lambda: (x8(),),
                   ["u0 = rows of x[mask]", "0 ≤ u0 ≤ 8"], (2 * 8, 8 * 4 + 8)),
    # at 0 rows the write-back puts nothing: the zeros are the output (8x4 fp32 written)
    "mask_put": (Fn(pack_unpack), Fn(lambda x: x * (x[:, :1] > 0) * 2), lambda: (x8(),),
                 ["u0 = rows of x[mask]", "0 ≤ u0 ≤ 8"], (2 * 8, 8 * 4 + 8 + 8 * 4 * 4)),
    "unique": (Fn(lambda a: torch.unique(a).float() * 2),
               Fn(lambda a: torch.sort(a).values.float() * 2), lambda: (ints(),),
               ["u0 = rows of unique", "0 ≤ u0 ≤ 16"], (2 * 16, 16 * 8 + 8)),
    "bincount": (Fn(lambda a: torch.bincount(a).float() * 2),
                 Fn(lambda a: (a[:, None] == torch.arange(3)).sum(0).float() * 2), lambda: (ints(),),
                 ["u0 = rows of bincount", "0 ≤ u0;"], (16, 16 * 8 + 8)),
    "repeat_interleave": (Fn(lambda x, r: x.repeat_interleave(r, dim=0) * 2),
                          Fn(lambda x, r: x.repeat_interleave(2, dim=0) * 2),
                          lambda: (x8(), torch.randint(0, 3, (8,))),
                          ["u0 = rows of repeat_interleave", "0 ≤ u0;"], (8, 8 * 8 + 8)),
    "where_one_argument": (Fn(lambda x: torch.where(x > 0)[0].float() * 2),
                           Fn(lambda x: (torch.arange(8)[:, None] * (x > 0)).flatten().float() * 2),
                           lambda: (x8(),), ["u0 = rows of nonzero", "0 ≤ u0 ≤ 32"], (2 * 32, 32 * 4 + 8)),
}


def _analyze(model: nn.Module, inputs: tuple) -> solar.Report:
    return solar.analyze(model, list(inputs), arch="H100-SXM", writeback=False)


@pytest.mark.parametrize("name", CASES)
def test_data_dependent_program_is_priced_at_the_least_size(name: str) -> None:
    model, dense, inputs, named, exact = CASES[name]
    torch.manual_seed(0)
    args = inputs()
    report = _analyze(model, args)
    sizes = [a for a in report.assumptions if a.startswith("data-dependent sizes: ")]
    assert len(sizes) == 1 and all(n in sizes[0] for n in named), report.assumptions
    assert "u1" in sizes[0] or sizes[0].endswith("; bound at the least (u0 = 0)"), sizes
    assert any(a.startswith("data-dependent sizes at 0: the work on those rows counts as none")
               for a in report.assumptions)
    if exact is not None:
        assert (report.totals.flops, report.totals.dram_bytes) == exact
    bound = _analyze(dense, args)
    for level, b in report.bounds.items():
        assert b.seconds <= bound.bounds[level].seconds, level


@pytest.mark.parametrize("style", ["where", "one_hot"])
def test_moe_dispatch_reads_the_router_and_its_input(style: str) -> None:
    """At 0 tokens per expert the experts cost nothing, but the router still runs on every token:
    x (T×H fp32) and the router weight (E×H) are read, the output written, each size (8 bytes)."""
    torch.manual_seed(0)
    report = _analyze(MoE(style), (torch.randn(T, H),))
    assert report.totals.contraction_flops == 2 * T * H * E
    assert report.totals.dram_bytes == 4 * (T * H + E * H + T * H) + 8 * E


def test_verify_says_data_dependent_sizes_are_not_compared() -> None:
    result = check_module(Fn(lambda x: torch.masked_select(x, x > 0) * 2), (x8(),))
    (check,) = result.checks
    assert check.mode == "unchecked"
    assert check.note.startswith("data-dependent sizes (u0): the IR holds them at their least (0 rows)")


def test_a_size_from_item_is_refused_in_one_line() -> None:
    with pytest.raises(UnsupportedOpError, match=r"a size that depends on the data comes from aten\._local_scalar_dense"):
        _analyze(Fn(lambda x, n: x[: n.item()] * 2), (x8(), torch.tensor(3)))


@pytest.mark.parametrize(
    "sizes,text",
    [
        ((DataSize("u0", "nonzero", "m.py:12: i = torch.nonzero(m)", 0, 4096, 0),),
         "u0 = rows of nonzero at m.py:12, 0 ≤ u0 ≤ 4096; bound at the least (u0 = 0)"),
        ((DataSize("u0", "bincount", "", 0, None, 0), DataSize("u1", "bincount", "", 0, None, 0)),
         "u0, u1 = rows of bincount, each 0 ≤ u; bound at the least (u0, u1 = 0 each)"),
        (tuple(DataSize(f"u{k}", "x[mask]", "m.py:3: y = x[m]", 0, 64, 0) for k in range(6))
         + (DataSize("u6", "bincount", "m.py:4: c = b.bincount(minlength=4)", 4, None, 4),),
         "u0 … u5 (6 sizes) = rows of x[mask] at m.py:3, each 0 ≤ u ≤ 64; u6 = rows of bincount at "
         "m.py:4, 4 ≤ u6; bound at the least (u0 … u5 (6 sizes) = 0 each, u6 = 4)"),
    ],
)
def test_sizes_of_one_line_are_described_together(sizes: tuple, text: str) -> None:
    assert describe(sizes) == text


def checked(x: torch.Tensor) -> torch.Tensor:
    """A run-time check on the data (as transformers' torch_compilable_check traces): the scalar
    it reads only feeds assertions."""
    torch._check_tensor_all(x.abs() >= 0)
    return x * 2


def test_a_scalar_only_checks_read_is_no_size() -> None:
    """The check's scalar is taken to pass and is no data-dependent size; nothing returned
    depends on the check, so only the product is priced: 8x4 multiplies, x read and the
    product written (fp32)."""
    report = _analyze(Fn(checked), (x8(),))
    assert not any(a.startswith("data-dependent sizes") for a in report.assumptions)
    assert (report.totals.flops, report.totals.dram_bytes) == (32, 2 * 32 * 4)
