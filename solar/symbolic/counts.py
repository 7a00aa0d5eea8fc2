"""Parametric counts as sympy expressions: isl-barvinok's piecewise quasi-polynomial of a domain or
a footprint, with each fitted size symbol `_zK` replaced by its definition in the user's symbols
(affine ones inside the isl text, so isl counts over the user's symbols; products of symbols as free
isl parameters substituted afterwards), converted to a sympy Piecewise over the pieces' domains.

The isl text comes from solar.ir.polyhedral (`domain_text`, `access_text` with parametric=True),
and so do the counts' pieces (`set_count_pieces`, `image_count_pieces`: islpy is imported only
there); here they are renamed into the user's symbols and read as sympy."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

import sympy

from solar.errors import SolarError
from solar.ir import polyhedral
from solar.ir.nodes import Stmt
from solar.symbolic.trace import SymbolicProgram


class Counter:
    """Counts of one SymbolicProgram: `domain(stmt)` and `footprint(tensor, kind, stmts)`, sympy."""

    def __init__(self, sp: SymbolicProgram) -> None:
        self.sp = sp
        self._memo: dict = {}  # isl text -> count (one Counter per symbolic program)
        self.users = sorted(sp.symbols)
        self.affine: dict[str, str] = {}  # _zK -> isl text of its affine definition
        self.free: dict[str, sympy.Expr] = {}  # _zK kept as an isl parameter (a product)
        for name, expr in sp.defs.items():
            text = _isl_affine(expr)
            if text is None:
                self.free[name] = expr
            else:
                self.affine[name] = text
        self.params = tuple(self.users + sorted(self.free))
        self.sym = {p: sympy.Symbol(p, integer=True, positive=True) for p in self.params}

    # ---- isl text --------------------------------------------------------------------------------
    def _rewrite(self, text: str) -> str:
        """Replace the `_zK` names by their definitions and the parameter list by ours."""
        body = (
            text.split("->", 1)[1]
            if text.lstrip().startswith("[") and "] ->" in text.split("{")[0]
            else text
        )
        for name, t in self.affine.items():
            body = re.sub(rf"\b{name}\b", f"({t})", body)
        return f"[{', '.join(self.params)}] -> {body.strip()}"

    def domain(self, stmt: Stmt) -> sympy.Expr:
        return self._card(
            self._rewrite(polyhedral.domain_text(self.sp.program, stmt, parametric=True))
        )

    def footprint(self, tensor: str, kind: str, stmts: Iterable[Stmt] | None = None) -> sympy.Expr:
        """Distinct elements of `tensor` read or written by `stmts` (default all), as in
        polyhedral.tensor_footprint."""
        program = self.sp.program
        maps = []
        for stmt in program.stmts if stmts is None else stmts:
            accesses = [stmt.target] if kind == "write" and stmt.target.tensor == tensor else []
            if kind == "read":
                accesses = [ld for ld in stmt.loads() if ld.tensor == tensor]
            for a in accesses:
                maps.append(
                    self._rewrite(polyhedral.access_text(program, stmt, a, parametric=True))
                )
        if not maps:
            return sympy.Integer(0)
        return self._image_card(tuple(sorted(maps)))

    def _image_card(self, maps: tuple[str, ...]) -> sympy.Expr:
        if maps not in self._memo:
            self._memo[maps] = self._pw(polyhedral.image_count_pieces(maps, self.params))
        return self._memo[maps]

    def _card(self, text: str) -> sympy.Expr:
        if text not in self._memo:
            self._memo[text] = self._pw(polyhedral.set_count_pieces(text, self.params))
        return self._memo[text]

    # ---- pieces -> sympy -------------------------------------------------------------------------
    def _pw(self, pieces: tuple[polyhedral.CountPiece, ...]) -> sympy.Expr:
        if not pieces:
            return sympy.Integer(0)
        out = [(_qpoly(p.polynomial, self.sym), self._condition(p.condition)) for p in pieces]
        subs = {self.sym[n]: e for n, e in self.free.items()}
        if len(out) == 1 and out[0][1] is sympy.true:
            return sympy.expand(out[0][0].subs(subs))
        return sympy.Piecewise(*[(e.subs(subs), c.subs(subs)) for e, c in out], (0, True))

    def _condition(self, condition) -> sympy.Basic:
        if condition is None:
            return sympy.true
        terms = []
        for conjunction in condition:
            cons = []
            for coefficients, equality in conjunction:
                lhs = sympy.Integer(0)
                for k, v in coefficients:
                    val = sympy.Rational(v)
                    lhs += val if k == 1 else val * self.sym[k]
                cons.append(sympy.Eq(lhs, 0) if equality else lhs >= 0)
            terms.append(sympy.And(*cons))
        return sympy.Or(*terms)


def _isl_affine(expr: sympy.Expr) -> str | None:
    """isl text of an affine expression with integer coefficients, floor((...)/d) for rational
    ones; None for a non-affine one (a product of symbols)."""
    poly = sympy.Poly(expr, *sorted(expr.free_symbols, key=str))
    if poly.total_degree() > 1:
        return None
    den = math.lcm(*[int(sympy.Rational(c).q) for c in poly.coeffs()])
    num = sympy.expand(expr * den)
    text = str(num).replace("**", "^")
    return text if den == 1 else f"floor(({text})/{den})"


def _qpoly(text: str, sym: Mapping[str, sympy.Symbol]) -> sympy.Expr:
    """sympy expression of an isl quasi-polynomial's text (`(1/2 * S + 1/2 * S^2)`)."""
    body = text.replace("^", "**")
    try:
        return sympy.expand(sympy.sympify(body, locals={**sym, "floor": sympy.floor}))
    except (sympy.SympifyError, TypeError) as exc:
        raise SolarError(f"cannot read isl's count {text!r} as a formula: {exc}") from None

