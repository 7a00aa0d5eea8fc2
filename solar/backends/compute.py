"""Compute time: the best assignment of divisible work to concurrently running units.

Units: the tensor cores, the FMA pipe, the ALU pipe and the SFU of all SMs, each priced at its
dense datasheet peak (scaled by a locked clock). Work classes (from solar.backends.work) are
eligible on the units listed in `unit_rates`, always assuming the hardware as capable as it could
possibly be. The time is the optimum of the linear program

    minimise T  subject to  Σ_i x_iu / r_iu <= T   for every unit u,
                            Σ_u x_iu = n_i         for every work class i,   x_iu >= 0

where n_i is the amount of work of class i and r_iu its rate on unit u. Why a lower bound: any real
schedule executes each op on some unit, units cannot exceed their peak rates, and the LP relaxes
every other constraint (dependencies, issue slots, register pressure, integrality) — so its optimum
is below the time of any schedule."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solar.backends.algebra import FLOATS, Algebra, Num
from solar.backends.assumptions import Assumptions
from solar.backends.work import MacKey, SimtKey, Work, simt_key
from solar.bounded import as_float
from solar.errors import SolarError, SpecError
from solar.hardware import HardwareSpec
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import CostClass

UNITS: tuple[str, ...] = ("tensor", "fma", "alu", "sfu")

# Tensor-core paths that compute the products of a dtype exactly, best first is not required: the
# fastest available one is taken. Each emulation is exact because every value of the source type is
# representable in the path's input type and the path accumulates in at least fp32 (int32 for ints):
#   fp8 (e4m3, e5m2) -> fp16 or bf16: fp8 values are fp16/bf16 values (A100 has no fp8 path);
#   int4 -> int8: int4 values are int8 values, accumulation in int32 either way;
#   fp4 (e2m1) -> fp8 (e4m3), fp16 or bf16: e2m1 values {0, ±0.5, ..., ±6} are in all three.
# Block-scaled formats (MX fp8/fp4, NVFP4) run on the same paths as their element types: Blackwell's
# block-scaled MMA applies the scales inside the instruction at the fp8/fp4 rate; elsewhere the
# block's products are formed on the element type's path and the per-block scale is applied to the
# partial sum (extra SIMT work that this bound does not charge: it can only make it lower).
# fp64 has only its own path; int8/u8 have only int8 (fp16/fp32 accumulation is not exact for int8
# sums in general). f32 and the mixed types that meet in f32 depend on the precision policy.
TENSOR_PATHS: dict[DType, tuple[str, ...]] = {
    DType.F64: ("fp64",),
    DType.F16: ("fp16",),
    DType.BF16: ("bf16",),
    DType.F8E4M3: ("fp8", "fp16", "bf16"),
    DType.F8E5M2: ("fp8", "fp16", "bf16"),
    DType.MXF8E4M3: ("fp8", "fp16", "bf16"),
    DType.MXF8E5M2: ("fp8", "fp16", "bf16"),
    DType.FP4: ("fp4", "fp8", "fp16", "bf16"),
    DType.MXFP4: ("fp4", "fp8", "fp16", "bf16"),
    DType.NVFP4: ("fp4", "fp8", "fp16", "bf16"),
    DType.I8: ("int8",),
    DType.U8: ("int8",),
    DType.I4: ("int4", "int8"),
}
# fp32 products: "exact" allows TF32 only for ops the framework lets use it; "fastest" allows the
# fastest of TF32/BF16/FP16 (tolerance-based benchmarks accept that).
F32_PATHS: dict[tuple[str, bool], tuple[str, ...]] = {
    ("exact", False): (),
    ("exact", True): ("tf32",),
    ("fastest", False): ("tf32", "bf16", "fp16"),
    ("fastest", True): ("tf32", "bf16", "fp16"),
}
# SIMT keys whose ops may also run at another key's rate with identical results: fp16/bf16 add,
# mul, fma, div and sqrt computed in fp32 and rounded back equal the native result (fp32 has
# >= 2p+2 significand bits, so the double rounding is innocuous).
SIMT_EMULATION: dict[str, tuple[str, ...]] = {
    "fp16": ("fp16", "fp32"),
    "bf16": ("bf16", "fp32"),
    "fp32": ("fp32",),
    "fp64": ("fp64",),
}
# Multiply-accumulates one FMA-pipe instruction slot may do, where more than one: int8 MACs may use
# dp4a (4 MACs per instruction; int4 unpacked to int8 likewise). Generous on purpose.
SIMT_MACS_PER_SLOT: dict[DType, int] = {DType.I8: 4, DType.U8: 4, DType.I4: 4}


@dataclass(frozen=True)
class ComputeTime:
    """`seconds`: the LP optimum; `by_unit`: busy seconds of each unit in one optimal assignment;
    `binding_unit`: the busiest unit (None for zero work); `binding_path`: the unit and the
    precision of the work class that keeps it busiest (`tensor bf16`, `fma fp32`, `sfu`)."""

    seconds: float
    by_unit: dict[str, float]
    binding_unit: str | None
    binding_path: str | None = None


# ---- rates ---------------------------------------------------------------------------------------


def clock_scale(spec: HardwareSpec, clock_mhz: float | None) -> float:
    """Compute rates scale with the SM clock; datasheet peaks are at the boost clock."""
    return 1.0 if clock_mhz is None else clock_mhz / spec.boost_clock_mhz.value


def simt_rate(spec: HardwareSpec, key: str) -> float:
    """Ops/s of the FMA pipe for a SIMT key: the fastest exact emulation the spec lists, falling
    back to fp32 when the spec lists none (optimistic: a lower bound)."""
    rates = [r for k in SIMT_EMULATION[key] if (r := spec.simt_rate(k))]
    if rates:
        return max(rates)
    fp32 = spec.simt_rate("fp32")
    if not fp32:
        raise SpecError(
            f"spec {spec.name!r} has no simt_flops_per_s.fp32 rate; every spec needs it"
        )
    return fp32


def tensor_paths(dtype: DType, allow_tf32: bool, precision: str) -> tuple[str, ...]:
    if dtype is DType.F32:
        return F32_PATHS[(precision, allow_tf32)]
    return TENSOR_PATHS.get(dtype, ())


def tensor_path(spec: HardwareSpec, mac: MacKey, precision: str) -> str | None:
    """The tensor-core path `tensor_mac_rate` prices a MAC class at (the fastest legal one)."""
    dtype, allow_tf32 = mac
    paths = tensor_paths(dtype, allow_tf32, precision)
    rated = [(r, k) for k in paths if (r := spec.tensor_rate(k))]
    return max(rated)[1] if rated else None


def path_label(spec: HardwareSpec, item: MacKey | SimtKey, unit: str, precision: str) -> str:
    """How one work class runs on one unit, for reports: `tensor bf16`, `fma fp32`, `alu`, `sfu`."""
    first = item[0]
    if unit == "tensor":
        return f"tensor {tensor_path(spec, item, precision)}"  # type: ignore[arg-type]
    if unit == "fma":
        key = simt_key(first) if isinstance(first, DType) else item[1]
        return f"fma {key}"
    return unit


def tensor_mac_rate(spec: HardwareSpec, mac: MacKey, precision: str) -> float | None:
    """MAC/s of the tensor cores for a MAC class: the fastest legal path the GPU has (the spec
    counts a MAC as 2 FLOPs), or None when there is none."""
    dtype, allow_tf32 = mac
    rates = [r for k in tensor_paths(dtype, allow_tf32, precision) if (r := spec.tensor_rate(k))]
    return max(rates) / 2 if rates else None


def unit_rates(
    spec: HardwareSpec, item: MacKey | SimtKey, precision: str, scale: float
) -> dict[str, float]:
    """Rate (work units per second) of one work class on each unit that may run it.

    MACs: tensor cores (if a legal path exists) and the FMA pipe (an FMA is one MAC; dp4a for int8).
    FMA-class ops: the FMA pipe, one op per flop slot (as if every op paired into an FMA:
    optimistic).
    COMPARE/BIT: FMA pipe or ALU pipe; the ALU pipe has no datasheet rate and is assumed as capable
    as the FMA pipe. TRANSCENDENTAL: SFU at its rate, or FMA-pipe polynomials priced at 1 op each at
    the fp32 (or faster) rate — optimistic on purpose."""
    rates: dict[str, float] = {}
    first = item[0]
    if isinstance(first, DType):
        dtype = first
        tc = tensor_mac_rate(spec, item, precision)  # type: ignore[arg-type]
        if tc:
            rates["tensor"] = tc
        per_slot = SIMT_MACS_PER_SLOT.get(dtype, 1)
        rates["fma"] = simt_rate(spec, simt_key(dtype)) / 2 * per_slot
    else:
        cls, key = item
        simt = simt_rate(spec, key)
        match cls:
            case CostClass.FMA:
                rates["fma"] = simt
            case CostClass.COMPARE | CostClass.BIT:
                rates["fma"] = simt
                rates["alu"] = simt
            case CostClass.TRANSCENDENTAL:
                rates["fma"] = max(simt, simt_rate(spec, "fp32"))
                rates["sfu"] = spec.sfu_ops_per_s.value
            case _:
                raise SolarError(f"work class {cls} has no compute unit (it should count nothing)")
    return {u: r * scale for u, r in rates.items() if r > 0}


def rate_table(
    items: Iterable[tuple[MacKey | SimtKey, Num]], spec: HardwareSpec, a: Assumptions
) -> tuple[tuple[Num, tuple[tuple[str, float], ...]], ...]:
    """The LP's rows: (amount, ((unit, rate), ...)) of each work class of `items` (class, amount),
    its units in name order, at the precision policy and clock of `a`."""
    scale = clock_scale(spec, a.clock_mhz)
    table = tuple(
        (n, tuple(sorted(unit_rates(spec, k, a.precision, scale).items()))) for k, n in items
    )
    if any(not rates for _, rates in table):
        raise SolarError("a work class has no unit that can run it")
    return table


# ---- the bound: over floats here, over sympy formulas in solar.symbolic.bounds -------------------


def alone_seconds(n: Num, rates: tuple[tuple[str, float], ...]) -> Num:
    """n / Σ_u r_u: one work class spread over every unit that can run it."""
    return n / sum(r for _, r in rates)


def dual_seconds(table: Sequence[tuple[Num, tuple]], y: Sequence[float]) -> Num:
    """Σ_i n_i min_u (y_u / r_iu) for unit weights y (y_u >= 0, Σ y_u = 1, in UNITS order): by weak
    duality every assignment of the work takes at least this long, at every amounts n."""
    return sum(n * min(y[UNITS.index(u)] / r for u, r in rates) for n, rates in table)


def dual_bound(
    table: Sequence[tuple[Num, tuple]], weightings: Iterable[Sequence[float]], alg: Algebra = FLOATS
) -> Num:
    """The compute time's lower bound from unit weightings: the largest of each weighting's
    `dual_seconds` and each class alone (`alone_seconds`). With the LP's optimal weighting it
    equals the LP optimum (solar computes T this way, so that no solver tolerance can push it
    above the optimum); with the weightings found at several sizes it holds at every size."""
    return alg.max_of(
        [*(dual_seconds(table, y) for y in weightings), *(alone_seconds(n, r) for n, r in table)]
    )


# ---- the linear program --------------------------------------------------------------------------


def compute_time(work: Work, spec: HardwareSpec, assumptions: Assumptions = Assumptions()) -> ComputeTime:
    """Lower bound on the time to execute `work` on `spec` under `assumptions` (its precision
    policy and locked clock; see the module docstring)."""
    if work.is_zero:
        return ComputeTime(0.0, {}, None)
    precision = assumptions.precision
    items = tuple((k, n) for k, n in work.macs + work.simt)
    for _, n in items:  # exact counts: one past the float range would overflow the LP
        as_float(n, "the program's work (operations of one class)", SolarError)
    seconds, busy, cells = _solve(rate_table(items, spec, assumptions))
    by_unit = {u: b for u, b in zip(UNITS, busy) if b > 0}
    # Several units may be saturated at the optimum; name the first of them in UNITS order.
    busiest = max(by_unit.values(), default=0.0)
    binding = next((u for u in UNITS if u in by_unit and by_unit[u] >= busiest * (1 - 1e-9)), None)
    path = None
    if binding is not None:
        _, row = max((b, i) for i, u, b in cells if u == binding)
        path = path_label(spec, items[row][0], binding, precision)
    return ComputeTime(seconds, by_unit, binding, path)


@functools.lru_cache(maxsize=65536)
def _solve(
    table: tuple[tuple[int, tuple[tuple[str, float], ...]], ...],
) -> tuple[float, tuple, tuple]:
    """Solve the LP for rows (amount, ((unit, rate), ...)); returns (T, busy seconds per UNITS,
    (row, unit, busy seconds) of every row on every unit it uses).

    T is taken from LP duality, not from the solver's objective, so that no solver tolerance can
    push it above the true optimum: for unit weights y_u >= 0 with Σ y_u = 1, every assignment has
    T >= Σ_u y_u busy_u >= Σ_i n_i min_u (y_u / r_iu). The solver's dual values give the y that
    makes this tight. Each class alone also needs n_i / Σ_u r_iu; the larger of the two bounds is
    returned (`dual_bound`)."""
    if len(table) == 1:  # one class spread over its units: T = n / Σ rates, exactly
        alone = dual_bound(table, ())
        rates = table[0][1]
        cells = tuple((0, u, alone) for u, _ in rates)
        return alone, tuple(alone if u in dict(rates) else 0.0 for u in UNITS), cells
    cols, res = solve_lp(table)
    busy = np.zeros(len(UNITS))
    cells = tuple((i, u, float(res.x[v] * t)) for v, (i, u, t) in enumerate(cols))
    for v, (i, u, t) in enumerate(cols):
        busy[UNITS.index(u)] += res.x[v] * t
    y = unit_weights(res)
    seconds = dual_bound(table, () if y is None else (y,))
    return seconds, tuple(float(b) for b in busy), cells


def solve_lp(table) -> tuple[list[tuple[int, str, float]], Any]:
    """The compute LP over rows (amount, ((unit, rate), ...)): minimise T over the fractions f_iu
    of each row run on each unit (Σ_u f_iu = 1), every unit busy Σ_i f_iu n_i / r_iu <= T. Returns
    the columns (row, unit, seconds of the whole row on that unit) and scipy's result."""
    cols = [(i, u, n / r) for i, (n, rates) in enumerate(table) for u, r in rates]
    # Scale times so the LP sees numbers near 1 (HiGHS tolerances are absolute): each column's
    # seconds over those of a reference column (k, w), the largest of the rows' fastest, written
    # (n_i / n_k) * (r_kw / r_iu) so that a table whose amounts are proportional to another's
    # (one op mix at another size) gives the solver the very same numbers.
    _, k, w = max((min((t, i, u) for j, u, t in cols if j == i)) for i in range(len(table)))
    n_k, r_kw = table[k][0], dict(table[k][1])[w]
    scaled = tuple(
        (i, u, (table[i][0] / n_k) * (r_kw / r)) for i, (n, rates) in enumerate(table) for u, r in rates
    )
    res = _highs(scaled, len(table))
    if res.status != 0:
        raise SolarError(f"compute-time LP failed: {res.message}")
    return cols, res


@functools.lru_cache(maxsize=65536)
def _highs(scaled: tuple[tuple[int, str, float], ...], rows: int) -> Any:
    """scipy's result for the LP with these scaled columns (row, unit, seconds / the reference
    column's): tables whose amounts are proportional (ops of one mix at different sizes) on the
    same rates give the same columns, so they share one solve; each table's own seconds, busy
    times and dual bound are then computed from its amounts (the dual bound holds for any unit
    weights, so sharing them cannot raise T above the optimum). Read-only."""
    from scipy.optimize import linprog  # a second or more of imports, paid only where an LP runs

    nvar = len(scaled) + 1  # fractions f_iu, then T
    c = np.zeros(nvar)
    c[-1] = 1.0
    a_eq = np.zeros((rows, nvar))
    a_ub = np.zeros((len(UNITS), nvar))
    for v, (i, u, t) in enumerate(scaled):
        a_eq[i, v] = 1.0
        a_ub[UNITS.index(u), v] = t
    a_ub[:, -1] = -1.0
    bounds = [(0.0, 1.0)] * len(scaled) + [(0.0, None)]
    return linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(len(UNITS)),
        A_eq=a_eq,
        b_eq=np.ones(rows),
        bounds=bounds,
        method="highs",
    )


def unit_weights(res) -> np.ndarray | None:
    """The LP's dual unit weights y >= 0 normalised to Σ y = 1 (None when they are all 0): every
    assignment takes T >= Σ_i n_i min_u (y_u / r_iu)."""
    y = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
    return y / y.sum() if y.sum() > 0 else None
