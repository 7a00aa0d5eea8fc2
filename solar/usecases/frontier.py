"""Exact inverses of the bounds' piecewise-linear terms: the DRAM bandwidth that makes a memory term
equal a target, the on-chip capacity at which the cache-aware traffic fits a budget, and the
frontier of (bandwidth, compute scale) pairs with which the unfused (eager) bound meets a target.

The unfused bound (solar.backends.bounds._unfused) with every compute rate scaled by γ = 1/σ and
bandwidth 1/β is, per op g with compute c_g, bytes d_g and launch floor L_g on the reference GPU,
and D the eager DRAM bytes (charged + unattributed):

    f(σ, β) = max( Σ_g max(c_g σ, d_g β, L_g),  D β )

(Σ s_g + max(0, Xβ − Σ(s_g − d_g β)) = max(Σ s_g, (X + Σ d_g) β)). It is convex and piecewise
linear; its pieces change only on the lines c_g σ = d_g β, c_g σ = L_g, d_g β = L_g and D β = T, so
the boundary point of {f <= T} on each of those lines is a superset of the frontier's vertices and
the frontier is the polyline through them (each point solved in closed form, `largest_x`)."""

from __future__ import annotations

import math

import numpy as np

from solar.backends.cache import traffic_at

MIN_ONCHIP_BYTES = 16  # below two fp64 words the capacity bound has no word to count


def least_bandwidth(nbytes: float, target_s: float) -> float:
    """The least float bandwidth b with nbytes / b <= target_s: nbytes / target_s, moved by an ulp
    where rounding needs it (so the memory term equals the target whenever a float can)."""
    if nbytes <= 0:
        return 0.0
    bw = nbytes / target_s
    while nbytes / bw > target_s:
        bw = math.nextafter(bw, math.inf)
    while (down := math.nextafter(bw, 0.0)) > 0 and nbytes / down <= target_s:
        bw = down
    return bw


def largest_x(a: np.ndarray, b: np.ndarray, target: float) -> float | None:
    """The largest x >= 0 with φ(x) = Σ max(a_i x, b_i) <= target (a, b >= 0), in closed form:
    with the breakpoints x_(1) <= ... <= x_(m) of the terms with a_i > 0, φ is linear between them,
    φ(x) = A_j x + B_j on [x_(j), x_(j+1)] (A_j: the first j slopes, B_j: the other terms' b);
    φ(x_(1)) = Σ b. None: not even x = 0 meets the target; inf: no term grows."""
    if b.sum() > target:
        return None
    pos = a > 0
    if not pos.any():
        return math.inf
    order = np.argsort(b[pos] / a[pos], kind="stable")
    ap, bp = a[pos][order], b[pos][order]
    xs = bp / ap
    slope = np.cumsum(ap)  # A_j, j = 1..m
    rest = b[~pos].sum() + (bp.sum() - np.cumsum(bp))  # B_j
    at = slope * xs + rest  # φ(x_(j)), nondecreasing
    j = int(np.searchsorted(at, target, side="right")) - 1  # last breakpoint with φ <= target
    j = max(j, 0)
    return float((target - rest[j]) / slope[j])


def unfused_frontier(
    c: np.ndarray, d: np.ndarray, launch: np.ndarray, eager_bytes: float, target_s: float
) -> list[tuple[float, float]]:
    """(β, σ) points on the boundary of {f(σ, β) <= target} (see the module docstring), sorted by
    β, σ finite and positive; β = 1/bandwidth, σ = 1/compute scale."""
    # identical kernels (the layers of a model) are one term times their count: same f, fewer lines
    rows, counts = np.unique(np.stack([c, d, launch], axis=1), axis=0, return_counts=True)
    c, d, launch = (rows[:, k] * counts for k in range(3))
    beta_max = target_s / eager_bytes if eager_bytes > 0 else math.inf
    cands: list[float] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        cands += [x for x in (launch / d) if np.isfinite(x) and x > 0]  # d β = L
        for g in range(len(c)):
            if c[g] > 0 and d[g] > 0:  # the ray c_g σ = d_g β: σ = r β
                r = d[g] / c[g]
                beta = largest_x(np.maximum(c * r, d), launch, target_s)
                if beta is not None and math.isfinite(beta):
                    cands.append(beta)
            if c[g] > 0 and launch[g] > 0:  # the line c_g σ = L_g
                sigma = launch[g] / c[g]
                beta = largest_x(d, np.maximum(c * sigma, launch), target_s)
                if beta is not None and math.isfinite(beta):
                    cands.append(beta)
    if math.isfinite(beta_max):
        cands.append(beta_max)
    out: dict[float, float] = {}
    for beta in sorted(set(cands)):
        if beta <= 0 or beta > beta_max:
            continue
        sigma = largest_x(c, np.maximum(d * beta, launch), target_s)
        if sigma is not None and 0 < sigma < math.inf:
            out[beta] = sigma
    return sorted(out.items())


def cache_aware_bytes_at(graph, traffic, onchip: int) -> float:
    """The cache-aware DRAM bytes of solar.backends.cache at on-chip capacity `onchip` bytes."""
    return traffic_at(graph, traffic, onchip).cache_aware_bytes


def least_onchip(graph, traffic, bandwidth: float, target_s: float) -> int | None:
    """The least whole number of bytes S >= MIN_ONCHIP_BYTES with cache-aware bytes(S) / bandwidth
    <= target_s (None: the compulsory bytes alone exceed it). The bytes are nonincreasing in S
    (each re-read term is Σ max(0, |E|·w − S); the Smith et al. term ceil(2mnk/√S) − 2S falls with
    S), so bisection over the integers finds the exact least S."""

    def fits(s: int) -> bool:
        return cache_aware_bytes_at(graph, traffic, s) / bandwidth <= target_s

    if traffic.compulsory_bytes / bandwidth > target_s:
        return None
    lo = MIN_ONCHIP_BYTES
    if fits(lo):
        return lo
    hi = max(lo * 2, int(traffic.onchip_bytes))
    while not fits(hi):
        hi *= 2
        if hi > 2**62:
            return None
    while hi - lo > 1:  # invariant: not fits(lo), fits(hi)
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi
