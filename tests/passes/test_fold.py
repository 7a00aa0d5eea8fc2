"""Expression folding and affine conditions (solar.passes.fold), table-driven."""

from __future__ import annotations

import pytest

from solar.ir.affine import Constraint, var
from solar.ir.parser import parse_expr
from solar.passes.fold import complement, condition, fold, is_noop, op_count
from solar.ir.scalar_ops import Update

i, j = var("i"), var("j")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("exp(-inf)", "0.0"),
        ("where(lt(1, 2), a[i], b[i])", "a[i]"),
        ("where(c[i], a[i], a[i])", "a[i]"),
        ("a[i] * 0.0", "0.0"),
        ("a[i] * 1.0 + 0.0", "a[i]"),
        ("-inf - a[i]", "-inf"),
        ("exp(-inf - a[i])", "0.0"),
        ("max(a[i], -inf)", "a[i]"),
        ("min(a[i], -inf)", "-inf"),
        ("and(le(a[i], 0.0), true)", "le(a[i], 0.0)"),
        ("or(true, c[i])", "true"),
        ("not(not(lt(a[i], b[i])))", "lt(a[i], b[i])"),
        ("index(j) - index(i) + 2", "index(-i + j + 2)"),
        ("i64(index(i)) * 3", "index(3*i)"),
        ("f32(true)", "1.0"),
        ("neg(neg(a[i]))", "a[i]"),
    ],
)
def test_fold(text, expected):
    assert fold(parse_expr(text)) == parse_expr(expected)


@pytest.mark.parametrize(
    "text,true,false",
    [
        ("le(index(j - i), 0)", [[Constraint(i - j)]], [[Constraint(j - i - 1)]]),
        ("gt(index(j), index(i))", [[Constraint(j - i - 1)]], [[Constraint(i - j)]]),
        ("lt(f32(index(i)), 2.5)", [[Constraint(2 - i)]], [[Constraint(i - 3)]]),
        ("ge(2, index(i))", [[Constraint(2 - i)]], [[Constraint(i - 3)]]),
        (
            "ne(index(i), index(j))",
            [[Constraint(i - j - 1)], [Constraint(j - i - 1)]],
            [[Constraint(i - j, equality=True)]],
        ),
        ("eq(index(i), 0.5)", [], [[]]),
    ],
)
def test_affine_conditions(text, true, false):
    cond = condition(parse_expr(text))
    assert [list(p) for p in cond.true] == true and [list(p) for p in cond.false] == false


@pytest.mark.parametrize("text", ["le(a[i], 0.0)", "lt(index(i), a[i])", "eq(index(0), 0)"])
def test_not_affine_conditions(text):
    assert condition(parse_expr(text)) is None


def test_complement_is_disjoint_pieces():
    piece = (Constraint(i - 1), Constraint(j - i, equality=True))
    assert complement(piece) == (
        (Constraint(-i),),
        (Constraint(i - 1), Constraint(j - i - 1)),
        (Constraint(i - 1), Constraint(i - j - 1)),
    )


def test_noops_and_op_counts():
    assert is_noop(Update.ADD, parse_expr("0.0")) and is_noop(Update.MAX, parse_expr("-inf"))
    assert not is_noop(Update.ASSIGN, parse_expr("0.0")) and not is_noop(
        Update.ADD, parse_expr("1.0")
    )
    assert op_count(parse_expr("exp(a[i] - b[i]) * f32(c[i])")) == 3
