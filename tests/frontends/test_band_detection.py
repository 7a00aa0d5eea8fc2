"""views.detect_band, which reads the structure of constant masks (a causal mask of a long prefill
has tens of millions of elements, so it works row by row), against its definition written out
over every element."""

from __future__ import annotations

import numpy as np
import pytest

from solar.frontends.views import Band, detect_band


def _reference(values: np.ndarray, constant_inside: bool) -> Band | None:
    """The definition: the band lo <= j - i <= hi, from the diagonal offsets of every element."""
    a = np.asarray(values)
    if a.ndim < 2 or a.shape[-1] < 2 or a.shape[-2] < 2:
        return None
    n, m = a.shape[-2:]
    d = np.arange(m)[None, :] - np.arange(n)[:, None]

    def band_of(keep):
        if not keep.any() or keep.all():
            return None
        lo, hi = int(d[keep].min()), int(d[keep].max())
        if not np.array_equal(keep, (d >= lo) & (d <= hi)):
            return None
        return (None if lo <= -(n - 1) else lo), (None if hi >= m - 1 else hi)

    if constant_inside:
        first = a.reshape(-1, n, m)[0]
        if not (a == first).all():
            return None
        distinct = np.unique(first)
        if len(distinct) != 2:
            return None
        for inside, outside in ((distinct[1], distinct[0]), (distinct[0], distinct[1])):
            band = band_of(first == inside)
            if band is not None:
                return Band(*band, inside.item(), outside.item())
        return None
    nonzero = (a != 0).reshape(-1, n, m).any(axis=0)
    if not nonzero.any():
        return None
    lo, hi = int(d[nonzero].min()), int(d[nonzero].max())
    band = (None if lo <= -(n - 1) else lo), (None if hi >= m - 1 else hi)
    return None if band == (None, None) else Band(*band, None, np.zeros((), a.dtype).item())


def _cases():
    rng = np.random.default_rng(0)
    out = []
    for n, m in ((2, 2), (5, 5), (4, 7), (7, 4), (16, 16)):
        d = np.arange(m)[None, :] - np.arange(n)[:, None]
        for lo, hi in ((None, 0), (0, None), (-2, 1), (1, 3), (-3, -1), (None, -1), (2, None), (0, 0), (-9, 9)):
            keep = np.ones((n, m), bool)
            if lo is not None:
                keep &= d >= lo
            if hi is not None:
                keep &= d <= hi
            out += [keep, np.where(keep, 0.0, -np.inf).astype(np.float32), np.where(keep, 1, 0)[None].repeat(3, 0)]
            broken = keep.copy()
            broken[n // 2, 0] = ~broken[n // 2, 0]
            out += [broken, np.where(keep, rng.standard_normal((n, m)), 0.0)]
        out += [rng.random((n, m)) > 0.5, rng.integers(0, 3, (n, m)), np.full((n, m), 7.0),
                np.where(d <= 0, np.nan, 0.0), np.where(d <= 0, 0.0, -0.0), np.zeros((n, m))]
    return out


@pytest.mark.parametrize("k", range(len(_cases())))
@pytest.mark.parametrize("constant_inside", [True, False])
def test_detect_band_matches_its_definition(k, constant_inside):
    a = _cases()[k]
    got, want = detect_band(a, constant_inside), _reference(a, constant_inside)
    if want is not None and isinstance(want.inside, float) and np.isnan(want.inside):
        assert got is not None and np.isnan(got.inside) and (got.lo, got.hi, got.outside) == (want.lo, want.hi, want.outside)
    else:
        assert got == want
