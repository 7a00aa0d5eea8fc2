"""The bound formulas' operations over sympy (`SYMPY`): the same functions of solar.backends that
compute the numeric bounds compute the formulas when given it (solar.backends.algebra)."""

from __future__ import annotations

import sympy

from solar.backends.algebra import Algebra

# Max; Add in one call (fast for many terms); Max(0, ·) clips; ceiling and sqrt stay exact at
# integer sizes (Smith et al.'s ⌈2mnk/√S⌉, solar.backends.capacity)
SYMPY = Algebra(
    max=sympy.Max,
    max_of=lambda terms: sympy.Max(*terms),
    sum=lambda terms: sympy.Add(*terms),
    zero=sympy.Integer(0),
    ceil_div=lambda a, b: sympy.ceiling(a / b),
    ceil_sqrt=lambda x: sympy.ceiling(sympy.sqrt(x)),
)
