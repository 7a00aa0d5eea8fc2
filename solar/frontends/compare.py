"""Output comparison shared by every frontend (`solar verify`): the result types, the error measure
(max |ir - ref| / max(1, max |ref|), NaN and inf positions must agree), the budgets and tolerances,
and the one checking loop. A frontend's adapter says how to run the original program or op and how
to make its inputs; this module decides what to run (whole program, or each op at its own shapes,
then at reduced shapes) and compares.

The loop, for one op instance: at its own shapes when the interpreter can afford them, then at each
size cap of REDUCED_CAPS, the first attempt that the op accepts and the interpreter affords is the
check; none: "unchecked" with the last reason."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solar.errors import IRVerifyError
from solar.ir.dtypes import DType
from solar.ir.interp import program_cost, run
from solar.ir.nodes import Program
from solar.ir.verify import verify

FULL_BUDGET = 3e7  # interpreter work (interp.program_cost) for a whole program
OP_BUDGET = 2e6  # ... for one op instance
REDUCED_CAPS = (64, 32, 16, 8, 4)
TOLERANCE = {
    DType.F64: 1e-9,
    DType.F32: 2e-4,
    DType.F16: 2e-2,
    DType.BF16: 5e-2,
    DType.F8E4M3: 0.25,
    DType.F8E5M2: 0.5,
}


@dataclass(frozen=True)
class Check:
    what: str  # the op (or "whole program")
    source: str
    shapes: str
    mode: str  # "full" | "op" | "op-reduced" | "unchecked"
    error: float  # max |ir - ref| / max(1, max |ref|)
    tolerance: float
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.mode != "unchecked" and self.error <= self.tolerance


@dataclass(frozen=True)
class CheckResult:
    program: str
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks if c.mode != "unchecked")

    @property
    def unchecked(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.mode == "unchecked")


def relative_error(ir: np.ndarray, ref: np.ndarray) -> float:
    """max |ir - ref| / max(1, max |ref|) over finite reference values; inf when shapes, NaN
    positions or infinities disagree. A reference in a row-major reshape of the IR's shape is
    compared in the IR's shape (the IR may keep an output in the reshape it was computed in)."""
    r = np.asarray(ref, dtype=np.float64)
    a = np.asarray(ir, dtype=np.float64)
    if a.shape != r.shape:
        if a.size != r.size:
            return math.inf
        r = r.reshape(a.shape)
    nan_r, nan_a = np.isnan(r), np.isnan(a)
    if (nan_r != nan_a).any():
        return math.inf
    inf_r = np.isinf(r)
    if (inf_r & (a != r)).any():
        return math.inf
    ok = ~(nan_r | inf_r)
    if not ok.any():
        return 0.0
    scale = max(1.0, float(np.abs(r[ok]).max()))
    return float(np.abs(a[ok] - r[ok]).max()) / scale


def tolerance(dtypes: Iterable[DType]) -> float:
    """The loosest tolerance of the dtypes a program computes in (a bf16 cast inside an fp32
    program rounds in the framework and not in the interpreter)."""
    return max((TOLERANCE.get(d, 0.0) for d in dtypes), default=0.0)


def program_tolerance(program: Program) -> float:
    return tolerance(t.dtype for t in program.tensors)


def compare(
    program: Program, feed: Mapping[str, np.ndarray], outputs: Sequence[str], refs: Sequence[np.ndarray]
) -> float:
    """The worst relative error of the program's outputs (run on `feed`) against `refs`; inf when
    the run fails a check (e.g. a gather index outside its table: nothing comparable)."""
    try:
        verify(program)
        outs = {**feed, **run(program, feed)}  # an output aliasing an input: its feed
    except IRVerifyError:
        return math.inf
    return max((relative_error(outs[n], r) for n, r in zip(outputs, refs)), default=0.0)


@dataclass(frozen=True)
class Attempt:
    """One op instance lowered at some shapes, with the framework's outputs on the same data."""

    program: Program
    feed: Mapping[str, np.ndarray]
    outputs: Sequence[str]
    refs: Sequence[np.ndarray]
    shapes: str


def check_instance(
    what: str,
    source: str,
    shapes: str,
    own_cost: float,
    attempt: Callable[[int | None], Attempt | str],
    reduce: bool = True,
) -> Check | None:
    """The checking loop for one op instance. `attempt(cap)` lowers and runs the op at its own
    shapes (cap None) or with sizes capped, returning an Attempt or the reason it failed.
    `own_cost` is the interpreter work at its own shapes. Returns None when that is unaffordable
    and `reduce` is off (the caller checks the op's parts instead)."""
    caps: list[int | None] = [None] if own_cost <= OP_BUDGET else []
    if not caps and not reduce:
        return None
    caps += list(REDUCED_CAPS) if reduce else []
    last = "too large for the interpreter"
    for cap in caps:
        got = attempt(cap)
        if isinstance(got, str):
            last = got
            continue
        if program_cost(got.program) > OP_BUDGET:
            continue
        error = compare(got.program, got.feed, got.outputs, got.refs)
        mode = "op" if cap is None else "op-reduced"
        return Check(what, source, got.shapes, mode, error, program_tolerance(got.program))
    return Check(what, source, shapes, "unchecked", math.inf, 0.0, last)


def capped(x: Any, cap: int, leaf: Callable[[Any], Any] = lambda x: None) -> Any:
    """`x` with every integer above `cap` mapped to `cap`, through tuples, lists and named tuples,
    so that sizes that must agree (a matmul's K, a reshape's target) still agree. `leaf(v)` may
    replace a value first (None: not a leaf)."""
    done = leaf(x)
    if done is not None:
        return done
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return min(int(x), cap)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(capped(v, cap, leaf) for v in x))
    if isinstance(x, (tuple, list)):
        return type(x)(capped(v, cap, leaf) for v in x)
    return x


def conv_sizes(
    cap: int, batch: int, groups: int, cin_g: int, cout_g: int, spatial, kernel, dilation
) -> tuple[int, int, int, int, list[int]]:
    """A smaller convolution of the same kind: batch, groups, channels per group and spatial sizes
    shrink (never below the extent one dilated window needs); stride, padding, kernel stay."""
    small = [
        max(min(int(x), max(cap // 4, 4)), d * (int(k) - 1) + 1)
        for x, k, d in zip(spatial, kernel, dilation)
    ]
    return min(int(batch), 2), min(groups, 4), min(int(cin_g), 8), min(int(cout_g), 8), small


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type when it has none)."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
