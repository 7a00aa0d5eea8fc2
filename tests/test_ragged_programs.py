"""The ragged-batch programs (benchmarks/ragged/): each analyses from its file, its contraction
FLOPs counted by hand, and the data-dependent sizes it has named in the assumptions with the range
torch proves and the value the bound takes."""

from __future__ import annotations

from pathlib import Path

import pytest

import solar

RAGGED = Path(__file__).resolve().parents[1] / "benchmarks" / "ragged"
HEADS, DIM, TOTAL = 4, 32, 256

# file: (contraction FLOPs, the data-dependent sizes line, or None where the program has none)
CASES = {
    # QKᵀ and P·V over the causal pairs of the packed batch (the block-diagonal part is data)
    "packed_attention": (2 * 2 * HEADS * DIM * TOTAL * (TOTAL + 1) // 2, None),
    # the MLP on the picked rows, none at u0 = 0
    "pack_padded_mlp": (0, "u0 = rows of x[mask] at pack_padded_mlp.py:24, 0 ≤ u0 ≤ 512; "
                           "bound at the least (u0 = 0)"),
    "masked_token_loss": (0, "u0 = rows of masked_select at masked_token_loss.py:21, 0 ≤ u0 ≤ 32768; "
                             "u1 = rows of masked_select at masked_token_loss.py:23, 0 ≤ u1 ≤ 512; "
                             "bound at the least (u0, u1 = 0 each)"),
    "ragged_expand": (0, "u0 = rows of repeat_interleave at ragged_expand.py:19, 0 ≤ u0; "
                         "bound at the least (u0 = 0)"),
}


@pytest.mark.parametrize("name", CASES)
def test_ragged_program_counts(name: str):
    flops, sizes = CASES[name]
    report = solar.analyze(str(RAGGED / f"{name}.py"), arch="H100-SXM")
    assert report.totals.contraction_flops == flops
    lines = [a.removeprefix("data-dependent sizes: ") for a in report.assumptions
             if a.startswith("data-dependent sizes: ")]
    assert lines == ([] if sizes is None else [sizes])
    if sizes is not None:  # a bound at 0 rows says so
        assert any(a.startswith("data-dependent sizes at 0:") for a in report.assumptions)
