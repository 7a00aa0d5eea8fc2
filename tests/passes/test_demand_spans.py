"""demand._Spans decides a candidate exactly as pulling it through the access and checking the
box (or the guard-clipped box) does: over a fixed sample of affine and quasi-affine index terms,
one-axis candidates (the fast path) and others (the general path); demand._Hull decides a
candidate for many readers at once exactly as asking `_inside` of each reader does."""

from __future__ import annotations

import random

from solar.ir.affine import Affine, Constraint, clip_ranges, is_box, value_range, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Load, Loop, Program, Role, Stmt, Store, TensorDecl
from solar.ir.scalar_ops import Update
from solar.passes.demand import _Hull, _inside, _Spans
from solar.passes.regions import axis, box_ranges, holds_on_box, pull

VARS = ("i", "j", "k")


def _term(rng: random.Random) -> Affine:
    e = Affine(const=rng.randint(-4, 4))
    for v in VARS:
        e = e + var(v) * rng.randint(-2, 3)
    kind = rng.randint(0, 3)
    if kind == 1:
        e = e + (var(rng.choice(VARS)) + rng.randint(0, 3)) // rng.randint(2, 4)
    elif kind == 2:
        e = e + (var(rng.choice(VARS)) * 2) % rng.randint(2, 5)
    return e


def _guard(rng: random.Random) -> Constraint:
    v = rng.choice(VARS)
    if rng.random() < 0.2:  # two variables: the domain is not a box
        return Constraint(var(v) - var(rng.choice(VARS)) + rng.randint(0, 3))
    a = rng.choice((1, -1, 2))
    return Constraint(var(v) * a + rng.randint(-6, 6), equality=rng.random() < 0.1)


def _candidate(rng: random.Random, rank: int) -> Constraint:
    k = rng.randrange(rank)
    kind = rng.randint(0, 5)
    if kind == 0:  # two axes
        expr = var(axis(k)) - var(axis(rng.randrange(rank))) + rng.randint(-3, 3)
        return Constraint(expr)
    if kind == 1:
        return Constraint(var(axis(k)) - rng.randint(-3, 9), equality=True)
    return Constraint(Affine(((axis(k), rng.choice((1, -1, 2, -3))),), rng.randint(-12, 12)))


def _generic_inside_box(program, stmt, index, c):
    """_inside's corner test as it was written before the fast path (None: not applicable)."""
    pulled = pull((c,), index)
    loop_vars = set(stmt.loop_vars)
    p = pulled[0]
    if not (p.expr.is_linear and p.variables <= loop_vars and is_box(stmt.guards, loop_vars)):
        return None
    box = clip_ranges(box_ranges(program, stmt), stmt.guards)
    if box is None:
        return True
    lo, hi = value_range(p.expr, box)
    return lo == hi == 0 if p.equality else lo >= 0


def _reading(rank: int, stmts: tuple[Stmt, ...]) -> Program:
    """The program of `stmts`, which read the input `a` (64 per dimension) into their outputs."""
    outputs = tuple(TensorDecl(s.target.tensor, (16,), DType.F32, Role.OUTPUT) for s in stmts)
    return Program("p", (TensorDecl("a", (64,) * rank, DType.F32, Role.INPUT), *outputs), stmts)


def test_spans_decide_as_pulling_and_checking_the_box():
    rng = random.Random(15)
    checked = fast = 0
    for _ in range(300):
        rank = rng.randint(1, 3)
        index = tuple(_term(rng) for _ in range(rank))
        loops = tuple(Loop(v, rng.randint(1, 7)) for v in VARS)
        guards = tuple(_guard(rng) for _ in range(rng.randint(0, 2)))
        stmt = Stmt(loops, Store("o", (var("i"),)), Update.ASSIGN, Load("a", index), guards)
        program = _reading(rank, (stmt,))
        spans = _Spans(program, stmt, index)
        for _ in range(6):
            c = _candidate(rng, rank)
            pulled = pull((c,), index)
            assert spans.holds(c) == holds_on_box(program, stmt, pulled[0])
            decided = spans.holds_on_clipped_box(c)
            if decided is not None:
                fast += 1
                assert decided == _generic_inside_box(program, stmt, index, c)
            checked += 1
    assert checked == 1800 and fast > 100


def _reader(rng: random.Random, rank: int, name: str) -> Stmt:
    """A statement reading `a`: mostly plain or shifted variables with single-variable guards
    (a concatenation's pieces, where the hull folds), sometimes a quasi-affine term or a
    two-variable guard (asked one by one), sometimes an empty domain."""
    index = tuple(
        _term(rng) if rng.random() < 0.2 else var(rng.choice(VARS)) + rng.randint(0, 20) for _ in range(rank)
    )
    loops = tuple(Loop(v, rng.randint(1, 9)) for v in VARS)
    guards = tuple(_guard(rng) for _ in range(rng.randint(0, 2)))
    return Stmt(loops, Store(name, (var("i"),)), Update.ASSIGN, Load("a", index), guards)


def test_hull_decides_as_every_reader():
    rng = random.Random(16)
    folded = checked = 0
    for _ in range(150):
        rank = rng.randint(1, 3)
        stmts = tuple(_reader(rng, rank, f"o{r}") for r in range(rng.randint(1, 8)))
        program = _reading(rank, stmts)
        readers = tuple((s, s.value) for s in stmts)
        hull = _Hull(program, readers)
        for _ in range(8):
            c = _candidate(rng, rank)
            expected = all(_inside(program, s, ld, c, _Spans(program, s, ld.index)) for s, ld in readers)
            assert hull.inside(c) == expected, (c, stmts)
            checked += 1
        folded += sum(1 for k in hull.axes.values() if len(k[2]) < len(readers))
    assert checked == 1200 and folded > 100