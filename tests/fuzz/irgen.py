"""Hypothesis strategies for IR programs, built from the IR's own node types and printed by its one
printer. Each node kind is one strategy in a table, so that a new node is one more row: a new
expression kind goes in EXPRESSIONS, a new statement kind (e.g. an in-order loop block) in
STATEMENTS, built from the `body` strategy it is given."""

from __future__ import annotations

import math
import string

from hypothesis import strategies as st

from solar.ir.affine import Affine, as_affine, eq, ge, lt, var
from solar.ir.dtypes import DType
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Index,
    Indirect,
    Load,
    Loop,
    Origin,
    Program,
    Role,
    Stmt,
    Store,
    TensorDecl,
)
from solar.ir.scalar_ops import OPS, ScalarOp, Update

# Words the grammar or the value syntax gives a meaning of their own.
RESERVED = {
    "for",
    "in",
    "where",
    "and",
    "program",
    "at",
    "id",
    "tf32",
    "sym",
    "inf",
    "nan",
    "true",
    "false",
    "ind",
    "index",
    "if",
    "order",
    "updates",
}
RESERVED |= {d.text for d in DType} | {op.value for op in ScalarOp} | {r.value for r in Role}

names = st.text(string.ascii_lowercase, min_size=1, max_size=4).filter(lambda s: s not in RESERVED)
loop_names = st.sampled_from(["i", "j", "k", "r0", "t", "oh"])
sizes = st.integers(1, 10**6)


@st.composite
def affines(draw, variables: list[str], depth: int = 0) -> Affine:
    """c0 + c1*v1 + ... with, rarely, a floor-division or modulus by a positive constant."""
    expr = as_affine(draw(st.integers(-50, 50)))
    for v in draw(st.lists(st.sampled_from(variables), max_size=3)) if variables else []:
        expr = expr + var(v) * draw(st.integers(-4, 4))
    if depth < 1 and variables and draw(st.integers(0, 5)) == 0:
        inner = draw(affines(variables, depth + 1))
        d = draw(st.integers(1, 8))
        expr = expr + (inner // d if draw(st.booleans()) else inner % d)
    return expr


def _consts():
    floats = st.floats(allow_nan=True, allow_infinity=True, width=64).filter(
        lambda x: not (x == 0 and math.copysign(1, x) < 0)
    )
    return st.one_of(st.integers(-(10**6), 10**6), floats, st.booleans()).map(Const)


def _loads(ctx, leaf):
    tensor = st.sampled_from(ctx["tensors"])

    @st.composite
    def build(draw):
        name, rank = draw(tensor)
        terms = []
        for _ in range(rank):
            if draw(st.integers(0, 6)) == 0:
                terms.append(Indirect(draw(leaf), draw(affines(ctx["vars"]))))
            else:
                terms.append(draw(affines(ctx["vars"])))
        return Load(name, tuple(terms))

    return build()


def _calls(ctx, sub):
    @st.composite
    def build(draw):
        op = draw(st.sampled_from(sorted(OPS, key=lambda o: o.value)))
        return Call(op, tuple(draw(sub) for _ in range(OPS[op].arity)))

    return build()


# Expression kinds: (name, strategy maker taking (ctx, smaller expressions)).
EXPRESSIONS = {
    "const": lambda ctx, sub: _consts(),
    "index": lambda ctx, sub: affines(ctx["vars"]).map(Index) if ctx["vars"] else _consts(),
    "load": lambda ctx, sub: _loads(ctx, sub),
    "call": lambda ctx, sub: _calls(ctx, sub),
    "cast": lambda ctx, sub: st.builds(Cast, st.sampled_from(list(DType)), sub),
}
LEAVES = ("const", "index", "load")


def expressions(ctx) -> st.SearchStrategy:
    base = st.one_of(*(EXPRESSIONS[k](ctx, _consts()) for k in LEAVES))
    return st.recursive(
        base, lambda sub: st.one_of(*(f(ctx, sub) for f in EXPRESSIONS.values())), max_leaves=6
    )


@st.composite
def origins(draw):
    op = draw(st.text(string.ascii_letters + string.digits + "._:-", min_size=1, max_size=20))
    source = draw(
        st.text(
            st.characters(blacklist_characters='"\n\r', blacklist_categories=("Cs", "Cc")),
            max_size=30,
        )
    )
    module = draw(st.text(string.ascii_letters + string.digits + "._", max_size=20))
    return Origin(op, draw(st.integers(-3, 100)), source, draw(st.booleans()), module)


@st.composite
def loop_nests(draw, symbols: list[str]):
    vs = draw(st.lists(loop_names, min_size=0, max_size=3, unique=True))
    return [
        Loop(v, draw(st.one_of(sizes, st.sampled_from(symbols)) if symbols else sizes)) for v in vs
    ]


@st.composite
def plain_statements(draw, ctx):
    loops = draw(loop_nests(ctx["symbols"]))
    vs = [lp.var for lp in loops]
    inner = dict(ctx, vars=vs)
    name, rank = draw(st.sampled_from(ctx["tensors"]))
    target = Store(name, tuple(draw(affines(vs)) for _ in range(rank)))
    guards = []
    for _ in range(draw(st.integers(0, 2))) if vs else []:
        a, b = draw(affines(vs)), draw(affines(vs))
        guards.append(draw(st.sampled_from([ge, lt, eq]))(a, b))
    return Stmt(
        tuple(loops),
        target,
        draw(st.sampled_from(list(Update))),
        draw(expressions(inner)),
        tuple(guards),
        draw(st.none() | origins()),
    )


# Statement kinds: strategy makers taking the program context.
STATEMENTS = {"plain": plain_statements}


@st.composite
def programs(draw) -> Program:
    symbols = draw(st.lists(names, max_size=2, unique=True))
    decl_names = draw(
        st.lists(names.filter(lambda n: n not in symbols), min_size=1, max_size=4, unique=True)
    )
    tensors = []
    for n in decl_names:
        shape = tuple(
            draw(st.one_of(sizes, st.sampled_from(symbols)) if symbols else sizes)
            for _ in range(draw(st.integers(0, 3)))
        )
        tensors.append(
            TensorDecl(
                n, shape, draw(st.sampled_from(list(DType))), draw(st.sampled_from(list(Role)))
            )
        )
    ctx = {"tensors": [(t.name, len(t.shape)) for t in tensors], "symbols": symbols, "vars": []}
    stmts = draw(st.lists(st.one_of(*(f(ctx) for f in STATEMENTS.values())), max_size=4))
    binding = tuple((s, draw(sizes)) for s in symbols)
    return Program(draw(names), tuple(tensors), tuple(stmts), binding)
