"""Parametric counts as sympy expressions: isl-barvinok's piecewise quasi-polynomial of a domain or
a footprint, with each fitted size symbol `_zK` replaced by its definition in the user's symbols
(affine ones inside the isl text, so isl counts over the user's symbols; products of symbols as free
isl parameters substituted afterwards), converted to a sympy Piecewise over the pieces' domains.

The isl text comes from solar.ir.polyhedral (`domain_text`, `access_text` with parametric=True);
only the union of images and the card are computed here."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

import islpy as isl
import sympy

from solar.errors import SolarError
from solar.ir import polyhedral
from solar.ir.nodes import Program, Stmt
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
        self.params = self.users + sorted(self.free)
        self.context = isl.Set(
            f"[{', '.join(self.params)}] -> {{ : {' and '.join(f'{p} >= 1' for p in self.params)} }}"
        )
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
        if maps in self._memo:
            return self._memo[maps]
        image = None
        for m in maps:
            r = isl.Map(m).range()
            image = r if image is None else image.union(r)
        self._memo[maps] = out = self._pw(image.card())
        return out

    def _card(self, text: str) -> sympy.Expr:
        if text not in self._memo:
            self._memo[text] = self._pw(isl.Set(text).card())
        return self._memo[text]

    # ---- isl -> sympy ----------------------------------------------------------------------------
    def _pw(self, count: isl.PwQPolynomial) -> sympy.Expr:
        count = count.intersect_params(self.context).gist_params(self.context).coalesce()
        pieces = count.get_pieces()
        if not pieces:
            return sympy.Integer(0)
        out = []
        for dom, qp in pieces:
            expr = _qpoly(qp, self.sym)
            out.append((expr, self._condition(dom)))
        subs = {self.sym[n]: e for n, e in self.free.items()}
        if len(out) == 1 and out[0][1] is sympy.true:
            return sympy.expand(out[0][0].subs(subs))
        return sympy.Piecewise(*[(e.subs(subs), c.subs(subs)) for e, c in out], (0, True))

    def _condition(self, dom: isl.Set) -> sympy.Basic:
        dom = dom.gist_params(self.context)
        if dom.plain_is_universe():
            return sympy.true
        terms = []
        for bs in dom.get_basic_sets():
            if bs.dim(isl.dim_type.div):
                raise SolarError(
                    f"a count's piece has a quasi-affine condition ({dom}); not supported"
                )
            cons = []
            for c in bs.get_constraints():
                lhs = sympy.Integer(0)
                for k, v in c.get_coefficients_by_name(isl.dim_type.param).items():
                    val = sympy.Rational(v.to_str())
                    lhs += val if k == 1 else val * self.sym[k]
                cons.append(sympy.Eq(lhs, 0) if c.is_equality() else lhs >= 0)
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


_FLOOR = re.compile(r"floor\(")


def _qpoly(qp: isl.QPolynomial, sym: Mapping[str, sympy.Symbol]) -> sympy.Expr:
    """sympy expression of an isl quasi-polynomial from its text (`(1/2 * S + 1/2 * S^2)`)."""
    text = str(qp)
    body = text.split("{", 1)[1].rsplit("}", 1)[0].strip() if "{" in text else text
    body = body.replace("^", "**")
    try:
        return sympy.expand(sympy.sympify(body, locals={**sym, "floor": sympy.floor}))
    except (sympy.SympifyError, TypeError) as exc:
        raise SolarError(f"cannot read isl's count {text!r} as a formula: {exc}") from None


def program_symbols(program: Program) -> dict[str, int]:
    return dict(program.symbols)
