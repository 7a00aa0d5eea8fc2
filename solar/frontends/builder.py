"""Builds an IR Program from lowering rules: declares tensors, emits statements (splitting a
consumer of a piecewise view into one statement per feasible piece), and provides the shared
builders every lowering uses: `elementwise`, `reduce`, `contract`.

A *term* is a tuple of guarded alternatives `(guards, expr)` (see views.py); `call` combines terms
the way a scalar op combines values."""

from __future__ import annotations

import re

import numpy as np
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Sequence

from solar.errors import SolarError
from solar.ir.affine import Affine, Constraint, simplify, value_range, var
from solar.ir.dtypes import DType
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Expr,
    Index,
    Loop,
    Origin,
    Program,
    Role,
    Seq,
    Stmt,
    Store,
    TensorDecl,
    map_index_terms,
    map_indices,
    nested,
)
from solar.ir.scalar_ops import ScalarOp, Update
from solar.frontends import views
from solar.frontends.views import Alt, View

Term = tuple[Alt, ...]


# ---- terms ---------------------------------------------------------------------------------------


def const(value: float | int | bool) -> Term:
    return (((), Const(value)),)


def index_value(expr: Affine) -> Term:
    return (((), Index(expr)),)


def as_term(x: Term | float | int | bool) -> Term:
    return x if isinstance(x, tuple) else const(x)


def call(op: ScalarOp, *args: Term | float | int | bool) -> Term:
    """Apply a scalar op to terms: one alternative per combination of the arguments' alternatives
    whose guards can hold together (two pieces of one concatenation never meet: `x * x` of a
    k-piece view has k alternatives, not k²)."""
    terms = [as_term(a) for a in args]
    # (guards, expressions, which alternative of each argument)
    combos: list[tuple[tuple[Constraint, ...], tuple[Expr, ...], tuple[int, ...]]] = [((), (), ())]
    for n, term in enumerate(terms):
        same = next((j for j in range(n) if terms[j] is term), None)
        if same is not None:  # the alternatives of a view are disjoint: a term meets itself only
            combos = [(g, es + (term[p[same]][1],), p + (p[same],)) for g, es, p in combos]
            continue
        combos = [
            (guards + g, exprs + (e,), picks + (k,))
            for guards, exprs, picks in combos
            for k, (g, e) in enumerate(term)
            if not (g and guards) or views.feasible(guards + g)
        ]
    return tuple((guards, Call(op, exprs)) for guards, exprs, _ in combos)


def cast(dtype: DType, t: Term) -> Term:
    return tuple((g, Cast(dtype, e)) for g, e in t)


def add(a, b):
    return call(ScalarOp.ADD, a, b)


def sub(a, b):
    return call(ScalarOp.SUB, a, b)


def mul(a, b):
    return call(ScalarOp.MUL, a, b)


def div(a, b):
    return call(ScalarOp.DIV, a, b)


# ---- the program builder -------------------------------------------------------------------------

_IDENT = re.compile(r"[^A-Za-z0-9_]")


@dataclass
class ProgramBuilder:
    """Collects tensors and a body of statements; `in_order` opens an in-order loop whose body the
    statements emitted inside the `with` block form."""

    name: str
    tensors: dict[str, TensorDecl]
    body: list[Stmt | Seq]
    origin: Origin | None = None
    # the open in-order loops, outermost first: (var, extent, body so far, stacks its temps)
    _open: list[tuple[str, int, list, bool]] = field(default_factory=list)
    # temps created inside stacking in-order loops: name -> the loop variables of their leading dims
    stacked: dict[str, tuple[Affine, ...]] = field(default_factory=dict)

    @staticmethod
    def new(name: str) -> ProgramBuilder:
        return ProgramBuilder(_IDENT.sub("_", name) or "program", {}, [])

    @property
    def stmts(self) -> list[Stmt]:
        """Every statement emitted so far (open in-order loops included), in program order."""
        done = [s for _, s in nested(tuple(self.body))]
        return done + [s for _, _, b, _ in self._open for _, s in nested(tuple(b))]

    @contextmanager
    def in_order(self, var_name: str, extent: int, stack: bool = False) -> Iterator[Affine]:
        """`with b.in_order("t", T) as t:` — statements emitted inside run once per step t.

        stack=True: every temp created inside gets a leading dimension of `extent` indexed by t
        (each step its own slot, as a scan's stacked outputs need); `temp` returns the per-step
        view and `emit` to such a temp prepends t to the index it is given."""
        self._open.append((var_name, extent, [], stack))
        try:
            yield var(var_name)
        finally:
            name, n, body, _ = self._open.pop()
            if body and n > 0:
                self._current().append(Seq(name, n, tuple(body)))

    def stacked_here(self, name: str) -> bool:
        """Whether `name` is a temp stacked along exactly the open stacking in-order loops."""
        return self.stacked.get(name) == tuple(var(v) for v, _, _, stack in self._open if stack)

    def whole(self, name: str) -> View:
        """A stacked temp seen from outside its innermost in-order loop: the slots of every step of
        that loop (the outer loops' variables fixed), e.g. a scan's stacked outputs."""
        decl, outer = self.tensors[name], self.stacked.get(name, ())[:-1]
        full = views.tensor(name, decl.shape, decl.dtype)
        if not outer:
            return full
        shape = decl.shape[len(outer) :]
        return View(shape, decl.dtype, lambda idx: full.at((*outer, *idx)), base=name)

    def _current(self) -> list:
        return self._open[-1][2] if self._open else self.body

    # -- tensors --
    def declare(self, hint: str, shape: Sequence[int], dtype: DType, role: Role) -> str:
        base = _IDENT.sub("_", hint).strip("_") or "t"
        if base[0].isdigit():
            base = "t" + base
        name, k = base, 1
        while name in self.tensors:
            name, k = f"{base}_{k}", k + 1
        self.tensors[name] = TensorDecl(name, tuple(int(s) for s in shape), dtype, role)
        return name

    def temp(self, hint: str, shape: Sequence[int], dtype: DType) -> View:
        stacks = [(v, n) for v, n, _, stack in self._open if stack]
        name = self.declare(hint, (*(n for _, n in stacks), *shape), dtype, Role.TEMP)
        if not stacks:
            return views.tensor(name, shape, dtype)
        prefix = tuple(var(v) for v, _ in stacks)
        self.stacked[name] = prefix
        whole = views.tensor(name, self.tensors[name].shape, dtype)
        return View(tuple(shape), dtype, lambda idx: whole.at((*prefix, *idx)), base=name)

    def set_role(self, name: str, role: Role) -> None:
        self.tensors[name] = replace(self.tensors[name], role=role)

    # -- statements --
    def emit(
        self,
        loops: Sequence[tuple[str, int]],
        target: str,
        index: Sequence[Affine],
        update: Update,
        value: Term,
        guards: Sequence[Constraint] = (),
    ) -> None:
        """Emit `for loops where guards: target[index] update value`, one statement per feasible
        alternative of `value`. Loops of extent 1 are removed (their variable is 0); index
        expressions are simplified with the loop ranges; guards that always hold are dropped."""
        if any(extent == 0 for _, extent in loops):
            return
        zero = {v: Affine() for v, extent in loops if extent == 1}
        kept = [(v, extent) for v, extent in loops if extent != 1]
        ranges = {v: (0, n - 1) for v, n, _, _ in self._open}
        ranges.update({v: (0, extent - 1) for v, extent in kept})

        def norm(e: Affine) -> Affine:
            return simplify(e.substitute(zero), ranges) if zero else simplify(e, ranges)

        tidx = map_index_terms((*self.stacked.get(target, ()), *index), norm)
        for alt_guards, expr in value:
            all_guards = [replace(g, expr=norm(g.expr)) for g in (*guards, *alt_guards)]
            live = _prune(all_guards, ranges)
            if live is None:
                continue
            self._current().append(
                Stmt(
                    loops=tuple(Loop(v, extent) for v, extent in kept),
                    target=Store(target, tidx),
                    update=update,
                    value=map_indices(expr, norm),
                    guards=tuple(live),
                    origin=self.origin,
                )
            )

    def program(self, outputs: Sequence[str]) -> Program:
        """The program; outputs are declared last, in the order given (the order returned). A
        computed tensor of no element (a data-dependent size at 0 rows) holds nothing: no
        statement writes it (`emit` drops empty loops), and it is left out."""
        empty = {n for n, t in self.tensors.items() if t.role is not Role.INPUT and t.role is not Role.PARAM and 0 in t.shape}
        outputs = [n for n in outputs if n not in empty]
        for name in outputs:
            self.set_role(name, Role.OUTPUT)
        rest = tuple(t for name, t in self.tensors.items() if name not in outputs and name not in empty)
        assert not self._open, "an in-order loop is still open"
        return Program(self.name, rest + tuple(self.tensors[n] for n in outputs), tuple(self.body))


def _prune(guards: list[Constraint], ranges: dict[str, tuple[int, int]]) -> list[Constraint] | None:
    """Drop guards that always hold over the loop ranges; None when the guards cannot all hold
    (checked exactly for single-variable guards, which is what piecewise views produce)."""
    bounds = dict(ranges)
    live: list[Constraint] = []
    for g in guards:
        lo, hi = value_range(g.expr, ranges)
        if g.equality:
            if lo == hi == 0:
                continue
            if lo > 0 or hi < 0:
                return None
        else:
            if lo >= 0:
                continue
            if hi < 0:
                return None
        if g not in live:
            live.append(g)
        if len(g.expr.terms) == 1 and isinstance(g.expr.terms[0][0], str) and not g.equality:
            v, c = g.expr.terms[0]
            b_lo, b_hi = bounds[v]
            # c*v + k >= 0
            k = g.expr.const
            if c > 0:
                b_lo = max(b_lo, -(k // c))
            else:
                b_hi = min(b_hi, k // (-c))
            if b_lo > b_hi:
                return None
            bounds[v] = (b_lo, b_hi)
    return live


# ---- shared lowering builders --------------------------------------------------------------------


def loop_vars(prefix: str, shape: Sequence[int]) -> tuple[list[tuple[str, int]], tuple[Affine, ...]]:
    loops = [(f"{prefix}{k}", int(s)) for k, s in enumerate(shape)]
    return loops, tuple(var(v) for v, _ in loops)


def scan(
    b: ProgramBuilder,
    hint: str,
    x: View,
    axis: int,
    dtype: DType,
    op: Callable[[Term, Term], Term],
    reverse: bool = False,
    step: str = "s",
) -> View:
    """Inclusive scan of `x` along `axis`: out[0] = x[0], then `for s in 0..n-1 in order`:
    out[s + 1] = op(out[s], x[s + 1]) (from the far end when `reverse`). One op per element after
    the first, the fewest any scan needs; the IR's size does not grow with n."""

    def load(index: tuple[Affine, ...]) -> Term:
        return x.at(index) if x.dtype == dtype else cast(dtype, x.at(index))

    n = x.shape[axis]
    out = b.temp(hint, x.shape, dtype)
    loops, idx = loop_vars("i", [s for d, s in enumerate(x.shape) if d != axis])

    def at(position: Affine) -> tuple[Affine, ...]:
        return (*idx[:axis], position, *idx[axis:])

    first = Affine(const=n - 1 if reverse else 0)
    b.emit(loops, out.base, at(first), Update.ASSIGN, load(at(first)))
    if n > 1:
        with b.in_order(step, n - 1) as t:
            cur, nxt = ((n - 1) - t, (n - 2) - t) if reverse else (t, t + 1)
            b.emit(loops, out.base, at(nxt), Update.ASSIGN, op(out.at(at(cur)), load(at(nxt))))
    return out


def elementwise(
    b: ProgramBuilder,
    hint: str,
    shape: Sequence[int],
    dtype: DType,
    inputs: Sequence[View | float | int | bool],
    fn: Callable[..., Term],
) -> View:
    """out[i] = fn(inputs broadcast to `shape` at i)."""
    loops, idx = loop_vars("i", shape)
    terms = [
        views.expand(x, shape).at(idx) if isinstance(x, View) else const(x) for x in inputs
    ]
    out = b.temp(hint, shape, dtype)
    b.emit(loops, out.base, idx, Update.ASSIGN, fn(*terms))
    return out


def copy(b: ProgramBuilder, hint: str, x: View, dtype: DType | None = None) -> View:
    """out[i] = x[i], cast to `dtype` when it differs: the view materialised in a tensor."""
    loops, idx = loop_vars("i", x.shape)
    dtype = x.dtype if dtype is None else dtype
    out = b.temp(hint, x.shape, dtype)
    value = x.at(idx) if dtype is x.dtype else cast(dtype, x.at(idx))
    b.emit(loops, out.base, idx, Update.ASSIGN, value)
    return out


def identity(update: Update, dtype: DType) -> float | int | bool:
    """The neutral element of a reduction in a dtype (±inf only exists for floats)."""
    value = update.identity
    if dtype.is_float or value in (0.0, 1.0):
        return value if dtype.is_float else int(value)
    info = np.iinfo(dtype.numpy) if dtype.kind == "int" else None
    if info is None:  # bool: max identity False, min identity True
        return value > 0
    return int(info.min) if value < 0 else int(info.max)


def reduce(
    b: ProgramBuilder,
    hint: str,
    x: View,
    dims: Sequence[int],
    keepdim: bool,
    update: Update,
    dtype: DType,
    value: Callable[[Term, tuple[Affine, ...]], Term] = lambda t, idx: t,
    init: Term | None = None,
    out: View | None = None,
) -> View:
    """out[kept] = init; out[kept] (update)= value(x[i]) over the reduced dims.

    `value` receives x's term and the full index (so a rule can subtract a per-row statistic);
    `init` defaults to the update's identity."""
    dims = sorted({d % max(x.rank, 1) for d in dims}) if x.rank else []
    loops, idx = loop_vars("i", x.shape)
    out_index = tuple(e for k, e in enumerate(idx) if k not in dims)
    out_shape = tuple(1 if k in dims else s for k, s in enumerate(x.shape) if keepdim or k not in dims)
    if keepdim:
        out_index = tuple(Affine() if k in dims else e for k, e in enumerate(idx))
    if out is None:
        out = b.temp(hint, out_shape, dtype)
    init_loops = [(v, s) for k, (v, s) in enumerate(loops) if k not in dims]
    init_index = out_index
    b.emit(init_loops, out.base, init_index, Update.ASSIGN, init if init is not None else const(identity(update, dtype)))
    b.emit(loops, out.base, out_index, update, value(x.at(idx), idx))
    return out


def contract(
    b: ProgramBuilder,
    hint: str,
    out_shape: Sequence[int],
    dtype: DType,
    reduce_extents: Sequence[int],
    a: Callable[[tuple[Affine, ...], tuple[Affine, ...]], Term],
    c: Callable[[tuple[Affine, ...], tuple[Affine, ...]], Term],
    init: Callable[[tuple[Affine, ...]], Term] | None = None,
    guards: Callable[[tuple[Affine, ...], tuple[Affine, ...]], Sequence[Constraint]] = lambda o, r: (),
) -> View:
    """out[o] = init(o); out[o] += a(o, r) * c(o, r) summed over the reduction index r."""
    out_loops, o = loop_vars("i", out_shape)
    red_loops, r = loop_vars("r", reduce_extents)
    out = b.temp(hint, out_shape, dtype)
    b.emit(out_loops, out.base, o, Update.ASSIGN, init(o) if init else const(0.0 if dtype.is_float else 0))
    b.emit(out_loops + red_loops, out.base, o, Update.ADD, mul(a(o, r), c(o, r)), guards(o, r))
    return out


def require(cond: bool, message: str) -> None:
    if not cond:
        raise SolarError(message)


__all__ = [
    "ProgramBuilder",
    "Term",
    "add",
    "call",
    "cast",
    "const",
    "contract",
    "div",
    "elementwise",
    "index_value",
    "loop_vars",
    "mul",
    "reduce",
    "require",
    "sub",
    "Index",
    "Expr",
]
