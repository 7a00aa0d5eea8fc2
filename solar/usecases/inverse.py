"""The compute bound inverted: the least rate of one resource with which the compute-time LP of
solar.backends.compute meets a target time T, solved as one exact linear program (never sampled).

The compute LP (solar.backends.compute) is: minimise T over assignments of work classes to units,
with Σ_i x_iu / r_iu <= T per unit u and Σ_u x_iu = n_i per class i. With T fixed, two kinds of
resource change keep the question linear:

- every rate on a set of units U scales by α (the SIMT pipes: every FMA/ALU rate is a SIMT rate
  times a constant, so scaling all SIMT rates scales both units): the least α is the LP
      minimise α  s.t.  Σ_i x_iu / r_iu <= α T  (u in U),   Σ_i x_iu / r_iu <= T  (u not in U).
- one path's rate ρ on one unit (a tensor-core dtype path; the SFU), beside fixed rates of other
  paths on that unit: the tensor unit's time is A(x)/ρ + B(x) with A, B linear, so the least ρ is
  the linear-fractional program  min A(x) / (T − B(x))  over the other constraints, which the
  Charnes–Cooper substitution (z = τx, τ = 1/(T − B(x))) turns into an exact LP.

A class that may run on the changed path and on a fixed path of the same unit gets one variable
for each: on one unit the faster path dominates, so the LP picks what `tensor_mac_rate` picks.
Times are normalised by T (and rates by a reference) so HiGHS sees numbers near 1; its feasibility
tolerances are set to TOLERANCE, so the returned rate is the LP optimum to that relative tolerance
(checked again by pricing the program on the provisioned spec, see solar.usecases.provision)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog

from solar.errors import SolarError

UNITS: tuple[str, ...] = ("tensor", "fma", "alu", "sfu")
TOLERANCE = 1e-10
HIGHS = {"primal_feasibility_tolerance": TOLERANCE, "dual_feasibility_tolerance": TOLERANCE}


@dataclass(frozen=True, slots=True)
class Row:
    """One work class: `amount` units of work, its fixed rate on each unit that may run it, and
    `scaled`: work per second per unit of the changed rate ρ on `unit` of the scaled path (0: the
    class cannot use that path)."""

    amount: float
    rates: tuple[tuple[str, float], ...]
    scaled: float = 0.0


def least_unit_scale(rows: tuple[Row, ...], target_s: float, units: frozenset[str]) -> float | None:
    """The least α such that the work meets `target_s` when every rate on `units` is multiplied
    by α (None: the other units alone cannot meet it; 0.0: `units` need do nothing)."""
    cols = [
        (i, u, r.amount / rate / target_s)
        for i, r in enumerate(rows)
        for u, rate in r.rates
        if rate > 0
    ]
    if any(not any(c[0] == i for c in cols) for i in range(len(rows))):
        raise SolarError("a work class has no unit that can run it")
    nvar = len(cols) + 1  # fractions f_iu of each class on each unit, then α
    c = np.zeros(nvar)
    c[-1] = 1.0
    a_ub = np.zeros((len(UNITS), nvar))
    b_ub = np.zeros(len(UNITS))
    a_eq = np.zeros((len(rows), nvar))
    for v, (i, u, t) in enumerate(cols):
        a_ub[UNITS.index(u), v] = t
        a_eq[i, v] = 1.0
    for k, u in enumerate(UNITS):
        if u in units:
            a_ub[k, -1] = -1.0
        else:
            b_ub[k] = 1.0
    res = _solve(c, a_ub, b_ub, a_eq, np.ones(len(rows)))
    return None if res is None else max(0.0, float(res.x[-1]))


def least_path_rate(rows: tuple[Row, ...], target_s: float, unit: str) -> float | None:
    """The least rate ρ of the scaled path on `unit` (Row.scaled gives each class's work per second
    per unit of ρ) with which the work meets `target_s` (None: unreachable however fast the path;
    0.0: the path need do nothing)."""
    cols: list[
        tuple[int, str, float, bool]
    ] = []  # (class, unit, time fraction or ρ-coefficient, scaled)
    for i, r in enumerate(rows):
        cols += [(i, u, r.amount / rate / target_s, False) for u, rate in r.rates if rate > 0]
        if r.scaled > 0:
            cols.append((i, unit, r.amount / r.scaled / target_s, True))
    if any(not any(c[0] == i for c in cols) for i in range(len(rows))):
        raise SolarError("a work class has no unit that can run it")
    scaled = [t for _, _, t, s in cols if s]
    if not scaled:
        return 0.0 if least_unit_scale(rows, target_s, frozenset()) is not None else None
    ref = max(scaled)
    # Charnes–Cooper: variables g = τ·f (one per column), then τ. Objective Σ g·k / ref (= ρ / ref).
    nvar = len(cols) + 1
    c = np.zeros(nvar)
    a_ub = np.zeros((len(UNITS), nvar))
    a_eq = np.zeros((len(rows) + 1, nvar))
    for v, (i, u, t, s) in enumerate(cols):
        if s:
            c[v] = t / ref
        elif u == unit:
            a_eq[-1, v] = -t  # τ − B(g) = 1
        else:
            a_ub[UNITS.index(u), v] = t  # Σ g t <= τ
        a_eq[i, v] = 1.0  # Σ_u g_iu = τ
    a_ub[:, -1] = -1.0
    a_ub[UNITS.index(unit), :] = 0.0  # the path's own unit is the fractional constraint
    a_eq[: len(rows), -1] = -1.0
    a_eq[-1, -1] = 1.0
    b_eq = np.zeros(len(rows) + 1)
    b_eq[-1] = 1.0
    res = _solve(c, a_ub, np.zeros(len(UNITS)), a_eq, b_eq)
    return None if res is None else max(0.0, float(res.fun) * ref)


def _solve(c: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray, a_eq: np.ndarray, b_eq: np.ndarray) -> Any:
    """min c·x over x >= 0 with A_ub x <= b_ub, A_eq x = b_eq by HiGHS; None when infeasible."""
    res = linprog(
        c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=[(0.0, None)] * len(c),
        method="highs", options=HIGHS,
    )
    if res.status == 2:
        return None
    if res.status != 0:
        raise SolarError(f"inverse compute LP failed: {res.message}")
    return res
