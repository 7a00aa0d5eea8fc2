"""What the bound formulas compute with: an `Algebra` of the few operations beyond + − × / that they
use, so that each formula is written once and computed over Python numbers here (`FLOATS`) and over
sympy formulas in solar.symbolic (`solar.symbolic.algebra.SYMPY`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

Num = TypeVar("Num")  # a float (an int where a formula is integral), or a sympy expression


@dataclass(frozen=True, slots=True)
class Algebra:
    """`max` of several terms, `max_of` an iterable of at least one term, `sum` of an iterable, the
    `zero` that clips a difference (max(zero, x)), and on integers `ceil_div(a, b)` = ⌈a/b⌉ and
    `ceil_sqrt(x)` = ⌈√x⌉."""

    max: Callable[..., Any]
    max_of: Callable[[Iterable[Any]], Any]
    sum: Callable[[Iterable[Any]], Any]
    zero: Any
    ceil_div: Callable[[Any, Any], Any]
    ceil_sqrt: Callable[[Any], Any]


def ceil_sqrt(x: int) -> int:
    """The smallest integer r with r*r >= x (x >= 0)."""
    r = math.isqrt(x)
    return r if r * r == x else r + 1


def ceil_div(a: int, b: int) -> int:
    """⌈a / b⌉ of integers (b > 0), exactly."""
    return -(-a // b)


FLOATS = Algebra(max, max, sum, 0.0, ceil_div, ceil_sqrt)
