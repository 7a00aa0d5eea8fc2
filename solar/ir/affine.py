"""Quasi-affine index expressions: integer combinations of loop variables, floor-divisions and moduli
by positive constants. Expressions are frozen values in a canonical form, simplified on construction,
so two equal expressions compare equal and hash alike."""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import itemgetter
from typing import Mapping, Union

import numpy as np

from solar.errors import NotAffineError


@dataclass(frozen=True, slots=True)
class FloorDiv:
    """floor(expr / divisor) with divisor > 0."""

    expr: Affine
    divisor: int


@dataclass(frozen=True, slots=True)
class Mod:
    """expr mod divisor (non-negative, as in Python) with divisor > 0."""

    expr: Affine
    divisor: int


Atom = Union[str, FloorDiv, Mod]
Value = Union[int, np.ndarray]


def _atom_key(atom: Atom) -> tuple:
    match atom:
        case str():
            return (0, atom)
        case FloorDiv(expr, d):
            return (1, d, _affine_key(expr))
        case Mod(expr, d):
            return (2, d, _affine_key(expr))
    raise TypeError(atom)


_first = itemgetter(0)


def _affine_key(expr: Affine) -> tuple:
    return (tuple((_atom_key(a), c) for a, c in expr.terms), expr.const)


@dataclass(frozen=True, slots=True)
class Affine:
    """sum(coeff * atom) + const. Build with `var`, `const` and the arithmetic operators."""

    terms: tuple[tuple[Atom, int], ...] = ()
    const: int = 0

    @staticmethod
    def make(terms: Mapping[Atom, int] | tuple[tuple[Atom, int], ...], const: int = 0) -> Affine:
        merged: dict[Atom, int] = {}
        for atom, coeff in terms.items() if isinstance(terms, dict) else terms:
            merged[atom] = merged.get(atom, 0) + int(coeff)
        items = [(a, c) for a, c in merged.items() if c != 0]
        if all(type(a) is str for a, _ in items):
            items.sort(key=_first)  # plain variables: (0, name) orders as the name does
        else:
            items.sort(key=lambda t: _atom_key(t[0]))
        return Affine(tuple(items), int(const))

    # ---- construction -------------------------------------------------------------------------
    def __add__(self, other: Affine | int) -> Affine:
        other = as_affine(other)
        if not other.terms or not self.terms:  # already canonical: no merge needed
            return Affine(self.terms or other.terms, self.const + other.const)
        return Affine.make(self.terms + other.terms, self.const + other.const)

    __radd__ = __add__

    def __neg__(self) -> Affine:
        return self * -1

    def __sub__(self, other: Affine | int) -> Affine:
        return self + (-as_affine(other))

    def __rsub__(self, other: Affine | int) -> Affine:
        return as_affine(other) - self

    def __mul__(self, k: int) -> Affine:
        if isinstance(k, Affine):
            if k.is_const:
                k = k.const
            elif self.is_const:
                return k * self.const
            else:
                raise NotAffineError(f"product of two index expressions ({self}) * ({k}) is not affine")
        if not isinstance(k, (int, np.integer)):
            raise NotAffineError(f"index expression {self} multiplied by non-integer {k!r}")
        k = int(k)
        if k == 0:
            return Affine()
        # Scaling by k != 0 keeps the terms sorted, distinct and nonzero: still canonical.
        return Affine(tuple((a, c * k) for a, c in self.terms), self.const * k)

    __rmul__ = __mul__

    def __floordiv__(self, d: int) -> Affine:
        d = _divisor(d, self, "//")
        if d == 1:
            return self
        if all(c % d == 0 for _, c in self.terms):
            # floor((d*q + c) / d) = q + floor(c / d) for integer q.
            return Affine.make(tuple((a, c // d) for a, c in self.terms), self.const // d)
        return Affine.make({FloorDiv(self, d): 1})

    def __mod__(self, d: int) -> Affine:
        d = _divisor(d, self, "%")
        if d == 1:
            return Affine()
        terms = tuple((a, c % d) for a, c in self.terms)
        reduced = Affine.make(terms, self.const % d)
        if reduced.is_const:
            return Affine(const=reduced.const % d)
        return Affine.make({Mod(reduced, d): 1})

    # ---- queries ------------------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return not self.terms

    @property
    def variables(self) -> frozenset[str]:
        out: set[str] = set()
        for atom, _ in self.terms:
            out |= atom_variables(atom)
        return frozenset(out)

    @property
    def is_plain_var(self) -> bool:
        """True for a bare loop variable such as `i` (coefficient 1, no constant)."""
        return (
            self.const == 0
            and len(self.terms) == 1
            and isinstance(self.terms[0][0], str)
            and self.terms[0][1] == 1
        )

    @property
    def is_linear(self) -> bool:
        """True when no floor-division or modulus occurs."""
        return all(isinstance(a, str) for a, _ in self.terms)

    def coefficient(self, var: str) -> int:
        return dict(self.terms).get(var, 0)

    def evaluate(self, env: Mapping[str, Value]) -> Value:
        total: Value = self.const
        for atom, coeff in self.terms:
            total = total + coeff * evaluate_atom(atom, env)
        return total

    def substitute(self, mapping: Mapping[str, Affine]) -> Affine:
        """Replace loop variables by expressions (variables absent from `mapping` stay)."""
        if _linear_canonical(self.terms) and not any(a in mapping for a, _ in self.terms):
            return self  # nothing to replace: rebuilding it gives an equal value
        terms: list[tuple[Atom, int]] = []
        const = self.const
        for atom, coeff in self.terms:
            if isinstance(atom, str) and atom not in mapping:
                terms.append((atom, coeff))
                continue
            e = substitute_atom(atom, mapping)
            terms += [(a, c * coeff) for a, c in e.terms]
            const += e.const * coeff
        return Affine.make(tuple(terms), const)

    def __str__(self) -> str:
        from solar.ir.printer import format_affine

        return format_affine(self)


def _linear_canonical(terms: tuple[tuple[Atom, int], ...]) -> bool:
    """Whether `terms` are plain variables with nonzero coefficients, in canonical order: the form
    `Affine.make` gives them (so an operation that would only rebuild them may keep them)."""
    return all(type(a) is str and c for a, c in terms) and all(
        terms[k][0] < terms[k + 1][0] for k in range(len(terms) - 1)
    )


def atom_variables(atom: Atom) -> frozenset[str]:
    match atom:
        case str():
            return frozenset((atom,))
        case FloorDiv(expr, _) | Mod(expr, _):
            return expr.variables
    raise TypeError(atom)


def evaluate_atom(atom: Atom, env: Mapping[str, Value]) -> Value:
    match atom:
        case str():
            try:
                return env[atom]
            except KeyError:
                raise NotAffineError(f"index variable {atom!r} is not bound by any loop") from None
        case FloorDiv(expr, d):
            return expr.evaluate(env) // d
        case Mod(expr, d):
            return expr.evaluate(env) % d
    raise TypeError(atom)


def substitute_atom(atom: Atom, mapping: Mapping[str, Affine]) -> Affine:
    match atom:
        case str():
            return mapping.get(atom, var(atom))
        case FloorDiv(expr, d):
            return expr.substitute(mapping) // d
        case Mod(expr, d):
            return expr.substitute(mapping) % d
    raise TypeError(atom)


def _divisor(d: object, expr: Affine, op: str) -> int:
    if isinstance(d, Affine) and d.is_const:
        d = d.const
    if not isinstance(d, (int, np.integer)) or d <= 0:
        raise NotAffineError(f"({expr}) {op} {d}: only division by a positive integer constant is quasi-affine")
    return int(d)


def var(name: str) -> Affine:
    return Affine(((name, 1),), 0)


def const(value: int) -> Affine:
    return Affine((), int(value))


def as_affine(x: Affine | int) -> Affine:
    if isinstance(x, Affine):
        return x
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return const(int(x))
    raise NotAffineError(f"{x!r} is not an integer index expression")


# ---- range analysis and range-aware simplification ---------------------------------------------

Ranges = Mapping[str, tuple[int, int]]  # inclusive [lo, hi] per loop variable


def value_range(expr: Affine, ranges: Ranges) -> tuple[int, int]:
    """Inclusive interval containing every value of `expr` when each variable lies in its range."""
    lo = hi = expr.const
    for atom, coeff in expr.terms:
        a_lo, a_hi = atom_range(atom, ranges)
        lo += min(coeff * a_lo, coeff * a_hi)
        hi += max(coeff * a_lo, coeff * a_hi)
    return lo, hi


def magnitude(expr: Affine, ranges: Ranges) -> int:
    """A bound on the absolute value of every partial sum met while evaluating `expr` (and the
    expressions inside its floor-divisions and moduli) with each variable in its range: below
    2**63, int64 evaluation is exact."""
    total = abs(expr.const)
    for atom, coeff in expr.terms:
        match atom:
            case str():
                inner = max(abs(x) for x in ranges.get(atom, (0, 0)))  # unbound: evaluate says
            case FloorDiv(e, d) | Mod(e, d):
                inner = max(magnitude(e, ranges), d)
        total += abs(coeff) * inner
    return total


def atom_range(atom: Atom, ranges: Ranges) -> tuple[int, int]:
    match atom:
        case str():
            return ranges[atom]
        case FloorDiv(expr, d):
            lo, hi = value_range(expr, ranges)
            return lo // d, hi // d
        case Mod(expr, d):
            lo, hi = value_range(expr, ranges)
            if lo >= 0 and hi < d:
                return lo, hi
            return 0, d - 1
    raise TypeError(atom)


def simplify(expr: Affine, ranges: Ranges) -> Affine:
    """Remove floor-divisions and moduli that the variable ranges make trivial.

    floor((d*q + r) / d) = q and (d*q + r) mod d = r whenever 0 <= r < d over the ranges; this turns the
    index maps of reshapes (flatten then unflatten) back into plain variables."""
    if _linear_canonical(expr.terms):
        return expr  # rebuilding it gives an equal value
    out = Affine(const=expr.const)
    for atom, coeff in expr.terms:
        out = out + _simplify_atom(atom, ranges) * coeff
    return out


def _simplify_atom(atom: Atom, ranges: Ranges) -> Affine:
    if isinstance(atom, str):
        return var(atom)
    inner = simplify(atom.expr, ranges)
    d = atom.divisor
    if isinstance(atom, FloorDiv):
        # floor((d*q + rest) / d) = q + floor(rest / d) for integer q, whatever rest's range.
        whole = tuple((a, c) for a, c in inner.terms if c % d == 0)
        if whole:
            rest = Affine.make(tuple((a, c) for a, c in inner.terms if c % d), inner.const)
            q = Affine.make(tuple((a, c // d) for a, c in whole))
            return q + _simplify_atom(FloorDiv(rest, d), ranges) if rest.terms else q + rest.const // d
    # Write inner = g*q + r with g | d and 0 <= r < g over the ranges. Then, with m = d/g,
    # floor(inner/d) = floor(q/m) and inner mod d = g*(q mod m) + r; try the largest g first.
    candidates = {d, 1} | {math.gcd(c, d) for _, c in inner.terms}
    for g in sorted(candidates, reverse=True):
        multiple = Affine.make(tuple((a, c) for a, c in inner.terms if c % g == 0))
        rest = inner - multiple
        r_lo, r_hi = value_range(rest, ranges)
        shift = r_lo // g
        if r_hi - g * shift >= g:
            continue
        if g == 1 and not rest.is_const:
            break
        q = Affine.make(tuple((a, c // g) for a, c in multiple.terms)) + shift
        r = rest - g * shift
        m = d // g
        if isinstance(atom, FloorDiv):
            return q if m == 1 else simplify(q // m, ranges) if g > 1 else q // m
        return r if m == 1 else (simplify(q % m, ranges) if g > 1 else q % m) * g + r
    if isinstance(atom, Mod):
        lo, hi = value_range(inner, ranges)
        if lo >= 0 and hi < d:
            return inner
    return inner // d if isinstance(atom, FloorDiv) else inner % d


@dataclass(frozen=True, slots=True)
class Constraint:
    """An affine guard: `expr >= 0`, or `expr == 0` when `equality`."""

    expr: Affine
    equality: bool = False

    def holds(self, env: Mapping[str, Value]) -> Value:
        v = self.expr.evaluate(env)
        return v == 0 if self.equality else v >= 0

    @property
    def variables(self) -> frozenset[str]:
        return self.expr.variables

    def substitute(self, mapping: Mapping[str, Affine]) -> Constraint:
        return Constraint(self.expr.substitute(mapping), self.equality)

    def __str__(self) -> str:
        from solar.ir.printer import format_constraint

        return format_constraint(self)


def ge(a: Affine | int, b: Affine | int) -> Constraint:
    """a >= b"""
    return Constraint(as_affine(a) - as_affine(b))


def lt(a: Affine | int, b: Affine | int) -> Constraint:
    """a < b"""
    return Constraint(as_affine(b) - as_affine(a) - 1)


def eq(a: Affine | int, b: Affine | int) -> Constraint:
    return Constraint(as_affine(a) - as_affine(b), equality=True)


def clip_ranges(ranges: Ranges, guards: tuple[Constraint, ...]) -> dict[str, tuple[int, int]] | None:
    """`ranges` narrowed by the guards that are linear in one variable of `ranges` (a*v + c >= 0
    or == 0; constant guards are decided); other guards are ignored, so the result is a box that
    contains every point satisfying the guards, and is exactly that set when no guard was
    ignored. None when the box is empty."""
    box = dict(ranges)
    for g in guards:
        e = g.expr
        if not e.terms:
            if (e.const != 0) if g.equality else (e.const < 0):
                return None
            continue
        if len(e.terms) > 1 or not isinstance(e.terms[0][0], str) or e.terms[0][0] not in box:
            continue
        (v, a), c = e.terms[0], e.const
        lo, hi = box[v]
        if g.equality:  # a*v + c == 0
            if c % a:
                return None
            lo, hi = max(lo, -c // a), min(hi, -c // a)
        elif a > 0:  # v >= ceil(-c / a)
            lo = max(lo, -(c // a))
        else:  # v <= floor(c / -a)
            hi = min(hi, c // -a)
        if lo > hi:
            return None
        box[v] = (lo, hi)
    return box


def is_box(guards: tuple[Constraint, ...], variables: frozenset[str] | set[str]) -> bool:
    """True when every guard is constant or linear in one of `variables` (the domain is a box)."""
    return all(
        not g.expr.terms
        or (len(g.expr.terms) == 1 and isinstance(g.expr.terms[0][0], str) and g.expr.terms[0][0] in variables)
        for g in guards
    )
