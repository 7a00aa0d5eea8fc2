"""The host dispatch floor with which eager execution could meet a target: the inverse of the
eager_host level (solar.backends.dispatch, docs/BOUNDS.md §17) in its host floors.

With every op's host floor x·w_i (w_i = 1 for an op that launches a kernel and 0 for a view: a
uniform floor x, as `--dispatch-us` gives; or w_i = the calibrated floor a_i: x scales the measured
floors), the pipeline's makespan unrolls to the upper envelope of lines in x

    M(x) = max( D,  max_k ( x·W_{k-1} − λ + S_k ),  x·W_n − λ ),
    W_k = w_1 + ... + w_k,   S_k = d_k + ... + d_n,   D = S_1,

(C_n = max over the op k whose start was last held back by the host). Every slope W is ≥ 0, so M is
convex, nondecreasing and piecewise linear, and the largest x with M(x) ≤ T is, exactly,

    x* = min( (T + λ − S_k) / W_{k-1} over k with W_{k-1} > 0,  (T + λ) / W_n )

— None when D > T (the device stage alone misses T), ∞ when nothing dispatches. A floor above x*
makes the bound exceed T, so no eager execution with that host cost meets T (docs/USECASES.md)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence


def _lines(weights: Sequence[float], device: Sequence[float], lead: float) -> list[tuple[float, float]]:
    """(slope, intercept) of every line of M(x)."""
    suffix = [0.0] * (len(device) + 1)
    for i in range(len(device) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + device[i]
    lines = [(0.0, suffix[0])]
    w_sum = 0.0
    for k, w in enumerate(weights):  # line of op k+1: slope W_k (the floors before it), S_{k+1}
        lines.append((w_sum, suffix[k] - lead))
        w_sum += w
    lines.append((w_sum, -lead))
    return lines


def largest_floor(weights: Sequence[float], device: Sequence[float], lead: float, target: float) -> float | None:
    """Largest x ≥ 0 with pipeline_makespan([x·w for w in weights], device, lead) ≤ target
    (module docstring): None when the device stage alone exceeds it, inf when no weight is > 0."""
    if len(weights) != len(device):
        raise ValueError(f"{len(weights)} host weights for {len(device)} device floors")
    lines = _lines(weights, device, lead)
    if lines[0][1] > target:
        return None
    best = math.inf
    for slope, intercept in lines[1:]:
        if slope > 0:
            best = min(best, (target - intercept) / slope)
    return best


def makespan_curve(
    weights: Sequence[float], device: Sequence[float], lead: float, x_max: float
) -> list[tuple[float, float]]:
    """The exact polyline (x, M(x)) of M on [0, x_max]: its breakpoints (the upper envelope of the
    lines), with both ends."""
    best: dict[float, float] = {}
    for slope, intercept in _lines(weights, device, lead):
        best[slope] = max(best.get(slope, -math.inf), intercept)
    hull: list[tuple[float, float]] = []  # lines by rising slope; each one on the envelope somewhere
    for line in sorted(best.items()):
        while hull:
            s, b = hull[-1]
            if line[1] >= b:  # higher slope and higher intercept: the last one never binds for x ≥ 0
                hull.pop()
                continue
            if len(hull) >= 2:
                s0, b0 = hull[-2]
                # the last line binds nowhere if the new one overtakes the one before it first
                if (b0 - line[1]) * (s - s0) <= (b0 - b) * (line[0] - s0):
                    hull.pop()
                    continue
            break
        hull.append(line)

    def value(x: float) -> float:
        return max(s * x + b for s, b in hull)

    xs = [0.0]
    for (s0, b0), (s1, b1) in itertools.pairwise(hull):
        x = (b0 - b1) / (s1 - s0)
        if 0.0 < x < x_max:
            xs.append(x)
    xs.append(x_max)
    return [(x, value(x)) for x in sorted(set(xs))]
