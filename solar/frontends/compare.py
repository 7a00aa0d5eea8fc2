"""Output comparison shared by every frontend: the result types of `solar verify` and the error
measure (max |ir - ref| / max(1, max |ref|), NaN and inf positions must agree)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


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
