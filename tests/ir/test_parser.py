"""The IR text form: print -> parse is the identity on programs, statements, expressions and affine
indices; malformed text raises IRSyntaxError pointing at the offending line and column."""

from __future__ import annotations

import math
import random

import pytest

from solar.errors import IRSyntaxError
from solar.ir.affine import Affine, Constraint, eq, ge, lt, var
from solar.ir.dtypes import DType
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Expr,
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
    walk,
)
from solar.ir.parser import parse_affine, parse_expr, parse_program, parse_stmt
from solar.ir.syntax import _lark
from solar.ir.printer import format_affine, format_expr, format_program, format_stmt
from solar.ir.scalar_ops import OPS, ScalarOp, Update

F32, I64 = DType.F32, DType.I64
INPUT, PARAM, OUTPUT, TEMP = Role.INPUT, Role.PARAM, Role.OUTPUT, Role.TEMP
i, j, k, q = var("i"), var("j"), var("k"), var("q")


def T(name: str, shape: tuple, role: Role = INPUT, dtype: DType = F32) -> TensorDecl:
    return TensorDecl(name, shape, dtype, role)


def ld(tensor: str, *index) -> Load:
    return Load(tensor, tuple(Affine(const=x) if isinstance(x, int) else x for x in index))


def call(op: ScalarOp, *args: Expr) -> Call:
    return Call(op, args)


def loops(**extents) -> tuple[Loop, ...]:
    return tuple(Loop(v, n) for v, n in extents.items())


def st(
    target: Store, value: Expr, update: Update = Update.ASSIGN, guards=(), origin=None, **ext
) -> Stmt:
    return Stmt(loops(**ext), target, update, value, tuple(guards), origin)


def store(tensor: str, *index: Affine) -> Store:
    return Store(tensor, tuple(index))


# ---- a table of hand-built programs covering every syntax feature --------------------------------

MM_ORIGIN = Origin("aten.mm.default", 0, "model.py:12")
MATMUL = Program(
    "mm",
    (T("A", ("M", 64)), T("B", (64, 32), PARAM), T("C", ("M", 32), OUTPUT)),
    (
        st(store("C", i, j), Const(0), origin=MM_ORIGIN, i="M", j=32),
        st(
            store("C", i, j),
            call(ScalarOp.MUL, ld("A", i, k), ld("B", k, j)),
            Update.ADD,
            origin=Origin("aten.mm.default", 0, "model.py:12", allow_tf32=True),
            i="M",
            j=32,
            k=64,
        ),
    ),
    symbols=(("M", 128),),
)

# causal softmax over scores S[q, k] with k <= q
CAUSAL = Program(
    "causal_softmax",
    (T("S", ("L", "L")), T("Mx", ("L",), TEMP), T("Z", ("L",), TEMP), T("P", ("L", "L"), OUTPUT)),
    (
        st(store("Mx", q), Const(float("-inf")), q="L"),
        st(store("Mx", q), ld("S", q, k), Update.MAX, [ge(q, k)], q="L", k="L"),
        st(store("Z", q), Const(0.0), q="L"),
        st(
            store("Z", q),
            call(ScalarOp.EXP, call(ScalarOp.SUB, ld("S", q, k), ld("Mx", q))),
            Update.ADD,
            [ge(q, k)],
            q="L",
            k="L",
        ),
        st(store("P", q, k), Const(0.0), q="L", k="L"),
        st(
            store("P", q, k),
            call(
                ScalarOp.DIV,
                call(ScalarOp.EXP, call(ScalarOp.SUB, ld("S", q, k), ld("Mx", q))),
                ld("Z", q),
            ),
            guards=[ge(q, k)],
            q="L",
            k="L",
        ),
    ),
    symbols=(("L", 16),),
)

# 3x3 conv, stride 2, padding 1: X[ci, 2*oh + kh - 1, 2*ow + kw - 1]
oh, ow, kh, kw, co, ci = (var(v) for v in ("oh", "ow", "kh", "kw", "co", "ci"))
ih, iw = 2 * oh + kh - 1, 2 * ow + kw - 1
CONV = Program(
    "conv",
    (T("X", (3, 8, 8)), T("W", (4, 3, 3, 3), PARAM), T("Y", (4, 4, 4), OUTPUT)),
    (
        st(store("Y", co, oh, ow), Const(0.0), co=4, oh=4, ow=4),
        st(
            store("Y", co, oh, ow),
            call(ScalarOp.MUL, ld("X", ci, ih, iw), ld("W", co, ci, kh, kw)),
            Update.ADD,
            [ge(ih, 0), lt(ih, 8), ge(iw, 0), lt(iw, 8)],
            co=4,
            oh=4,
            ow=4,
            ci=3,
            kh=3,
            kw=3,
        ),
    ),
)

# view [4, 6] -> [3, 8] through the flat index
flat = 8 * i + j
RESHAPE = Program(
    "reshape",
    (T("X", (4, 6)), T("Y", (3, 8), OUTPUT), T("Z", (2, 12), OUTPUT)),
    (
        st(store("Y", i, j), ld("X", flat // 6, flat % 6), i=3, j=8),
        st(store("Z", i, j), ld("Y", (12 * i + j) // 8, (12 * i + j) % 8), i=2, j=12),
    ),
)

GATHER = Program(
    "gather",
    (
        T("E", (100, 16), PARAM),
        T("I", (8,), dtype=I64),
        T("Y", (8, 16), OUTPUT),
        T("Y2", (8, 8), OUTPUT),
    ),
    (
        st(store("Y", i, j), Load("E", (Indirect(ld("I", i)), j)), i=8, j=16),
        st(
            store("Y2", i, j),
            call(
                ScalarOp.ADD,
                Load("E", (Indirect(ld("I", i), 2 * j + 1), j)),
                Load("E", (Indirect(ld("I", i), -j - 3), 2 * j)),
            ),
            i=8,
            j=8,
        ),
        st(
            store("Y2", i, j),
            Load(
                "E",
                (
                    Indirect(Cast(I64, call(ScalarOp.ADD, ld("I", i), Const(1))), Affine(const=-1)),
                    i,
                ),
            ),
            Update.MAX,
            i=8,
            j=8,
        ),
    ),
)

INDEX_CAST = Program(
    "iota",
    (T("A", (8, 8)), T("Y", (8, 8), OUTPUT, DType.F16), T("B", (8, 8), OUTPUT, DType.BOOL)),
    (
        st(
            store("Y", i, j),
            call(
                ScalarOp.WHERE,
                call(ScalarOp.LT, Index(i), Index(j)),
                Cast(DType.F16, ld("A", i, j)),
                Cast(DType.BF16, Const(0.5)),
            ),
            i=8,
            j=8,
        ),
        st(store("Y", i, j), Cast(DType.F16, Index(2 * i - j + 1)), Update.ADD, i=8, j=8),
        st(store("B", i, j), Cast(DType.BOOL, Index(i - j)), i=8, j=8),
    ),
)


def _all_ops_value() -> Expr:
    args = (ld("A", i), ld("A", 7 - i), ld("A", (i + 3) % 8))
    value: Expr = Const(0.0)
    for op in ScalarOp:
        value = call(ScalarOp.ADD, value, Call(op, args[: OPS[op].arity]))
    return value


ALL_OPS = Program(
    "all_ops",
    (T("A", (8,)), T("Y", (8,), OUTPUT)),
    (
        st(store("Y", i), _all_ops_value(), i=8),
        *(st(store("Y", i), ld("A", i), u, i=8) for u in Update),
    ),
)

PRECEDENCE = Program(
    "precedence",
    (T("A", (4,)), T("Y", (4,), OUTPUT)),
    tuple(
        st(store("Y", i), value, i=4)
        for value in (
            call(ScalarOp.SUB, ld("A", i), call(ScalarOp.SUB, ld("A", i), Const(1))),
            call(ScalarOp.SUB, call(ScalarOp.SUB, ld("A", i), ld("A", i)), Const(1)),
            call(ScalarOp.DIV, ld("A", i), call(ScalarOp.MUL, ld("A", i), Const(2))),
            call(ScalarOp.MUL, call(ScalarOp.ADD, ld("A", i), Const(-1)), Const(-2.5)),
            call(ScalarOp.MUL, Const(-1.5), ld("A", i)),
            call(ScalarOp.SUB, ld("A", i), Const(-1e-05)),
            call(ScalarOp.NEG, call(ScalarOp.ADD, ld("A", i), Const(1))),
            call(ScalarOp.NEG, Const(3)),
            call(ScalarOp.SUB, Const(0), ld("A", i)),
        )
    ),
)

SCALARS = Program(
    "scalars",
    (T("A", (8,)), T("S", (), TEMP), T("Y", (), OUTPUT)),
    (
        st(store("S"), Const(0), origin=Origin("aten.sum.default", 7)),
        st(store("S"), ld("A", i), Update.ADD, origin=Origin("aten.sum.default", 7), i=8),
        st(
            store("Y"),
            call(ScalarOp.MUL, ld("S"), Const(0.125)),
            origin=Origin("jax:reduce_sum", -1, "f.py:3"),
        ),
    ),
)

CONSTS = Program(
    "consts",
    (T("Y", (12,), OUTPUT),),
    tuple(
        st(store("Y", Affine(const=n)), Const(c))
        for n, c in enumerate(
            (
                0,
                0.0,
                -1.5,
                True,
                False,
                float("inf"),
                float("-inf"),
                1e-05,
                -3,
                10**20,
                1e300,
                float("nan"),
            )
        )
    ),
)

SCATTER = Program(
    "scatter",
    (T("I", (8, 3), dtype=I64), T("X", (8, 3)), T("Y", (10, 3), OUTPUT)),
    (
        st(store("Y", i, j), Const(0.0), i=10, j=3),
        st(store("Y", Indirect(ld("I", i, j), Affine(const=1)), j), ld("X", i, j), Update.ADD, i=8, j=3),
    ),
)

PROGRAMS = [MATMUL, CAUSAL, CONV, RESHAPE, GATHER, SCATTER, INDEX_CAST, ALL_OPS, PRECEDENCE, SCALARS, CONSTS]


def _has_nan(program: Program) -> bool:
    return any(
        isinstance(e, Const) and isinstance(e.value, float) and math.isnan(e.value)
        for s in program.stmts
        for e in walk(s.value)
    )


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_round_trip(program: Program) -> None:
    text = format_program(program)
    parsed = parse_program(text)
    assert format_program(parsed) == text
    if not _has_nan(program):  # nan != nan, so the text comparison above is the check
        assert parsed == program


@pytest.mark.parametrize("stmt", [s for p in PROGRAMS for s in p.stmts], ids=str)
def test_stmt_round_trip(stmt: Stmt) -> None:
    text = format_stmt(stmt)
    assert format_stmt(parse_stmt(text)) == text
    assert format_stmt(parse_stmt("  " + text.replace("\n", "\n    "))) == text  # any indentation


def test_ints_stay_ints() -> None:
    values = [s.value.value for s in parse_program(format_program(CONSTS)).stmts]
    assert [type(v) for v in values] == [int, float, float, bool, bool] + [float] * 3 + [
        int,
        int,
    ] + [float] * 2
    assert values[0] == 0 and values[3] is True and math.isnan(values[-1])
    assert parse_expr("-0") == Const(0) and parse_expr("-inf") == Const(float("-inf"))


def test_negative_constant_versus_negation() -> None:
    assert parse_expr("-1.5") == Const(-1.5)
    assert parse_expr("neg(1.5)") == Call(ScalarOp.NEG, (Const(1.5),))
    assert parse_expr("-1.5 * A[i]") == Call(ScalarOp.MUL, (Const(-1.5), ld("A", i)))
    assert parse_expr("-A[i]") == Call(
        ScalarOp.NEG, (ld("A", i),)
    )  # lenient input, printed as neg(...)


def test_guards_normalise_through_affine_helpers() -> None:
    text = (
        "for q in 0..8, k in 0..8 where k <= q and q > k and k < 4 and q == 2*k and q >= 1:\n"
        "  S[q, k] = 1"
    )
    assert parse_stmt(text).guards == (ge(q, k), lt(k, q), lt(k, 4), eq(q, 2 * k), ge(q, 1))
    # the printed form `e >= 0` / `e == 0` parses back to the same Constraint
    for g in (ge(q, k), lt(k, q), eq(q, 2 * k), Constraint(-q + 3)):
        stmt = parse_stmt(f"for q in 0..8, k in 0..8 where {g}:\n  S[q, k] = 1")
        assert stmt.guards == (g,)
    # Python-style chains: a <= b < c is a <= b and b < c
    assert parse_stmt("for k in 0..8 where 0 <= k - 1 < 6:\n  S[k] = 1").guards == (
        ge(k - 1, 0),
        lt(k - 1, 6),
    )


def test_affine_syntax() -> None:
    assert parse_affine("2*oh + kh - 1") == ih
    assert parse_affine("oh*2 + (kh - 1)") == ih
    assert parse_affine("-(i - 2*j)") == 2 * j - i
    assert parse_affine("(8*i + j) // 6") == flat // 6
    assert parse_affine("((8*i + j) % 6)") == flat % 6
    assert parse_affine("3 * (i // 2) - 4") == 3 * (i // 2) - 4
    assert parse_affine("i + j % 3") == i + j % 3  # Python precedence
    assert parse_affine("(2*i) // 2") == i  # canonical form through the Affine operators


def test_comments_blank_lines_and_layout_are_ignored() -> None:
    text = """
    # a matmul, written by hand
    program mm {   # the program
      sym M = 128

      input A: f32[M, 64]      # activations
      param B: f32[64, 32,]
      output C: f32[M, 32]
      @op aten.mm.default id=0 at "model.py:12"   # init
      for i in 0..M, j in 0..32:
          C[i, j] = 0
      # the contraction
      @op aten.mm.default id=0 tf32 at "model.py:12"
      for i in 0..M,
          j in 0..32, k in 0..64:

        C[i,j] += A[i, k] *
                  B[k,
                    j]
    }
    """
    assert parse_program(text) == MATMUL


def test_nested_for_headers_merge_into_one_nest() -> None:
    nested = "for i in 0..4:\n  for j in 0..4 where j <= i:\n    C[i, j] = 1"
    assert parse_stmt(nested) == parse_stmt(
        "for i in 0..4, j in 0..4 where i - j >= 0:\n  C[i, j] = 1"
    )


def test_printer_docstring_example_parses() -> None:
    import solar.ir.printer as printer

    example = printer.__doc__.split("\n\n")[1]
    program = parse_program(example)
    assert format_program(program) == format_program(parse_program(format_program(program)))
    assert [s.origin.op for s in program.stmts] == ["aten.mm.default"] * 2


def test_parser_is_built_once() -> None:
    assert _lark() is _lark()


# ---- property-style: random affine expressions and expression trees ------------------------------

VARS = ("i", "j", "k", "oh")


def random_affine(rng: random.Random, depth: int = 3) -> Affine:
    if depth == 0 or rng.random() < 0.3:
        return var(rng.choice(VARS)) if rng.random() < 0.7 else Affine(const=rng.randint(-9, 9))
    a = random_affine(rng, depth - 1)
    match rng.randrange(6):
        case 0:
            return a + random_affine(rng, depth - 1)
        case 1:
            return a - random_affine(rng, depth - 1)
        case 2:
            return a * rng.randint(-4, 4)
        case 3:
            return a // rng.randint(1, 7)
        case 4:
            return a % rng.randint(1, 7)
        case _:
            return -a


def random_expr(rng: random.Random, depth: int = 4) -> Expr:
    if depth == 0 or rng.random() < 0.25:
        match rng.randrange(5):
            case 0:
                return Const(
                    rng.choice(
                        [
                            0,
                            1,
                            -7,
                            0.5,
                            -2.25,
                            1e-3,
                            3e12,
                            True,
                            False,
                            float("inf"),
                            float("-inf"),
                            rng.uniform(-10, 10),
                        ]
                    )
                )
            case 1:
                return Index(random_affine(rng, 2))
            case _:
                terms = tuple(
                    Indirect(random_expr(rng, depth - 1), random_affine(rng, 1))
                    if depth > 0 and rng.random() < 0.15
                    else random_affine(rng, 2)
                    for _ in range(rng.randint(0, 3))
                )
                return Load(rng.choice(["A", "B2", "idx"]), terms)
    if rng.random() < 0.15:
        return Cast(rng.choice(list(DType)), random_expr(rng, depth - 1))
    op = rng.choice(list(ScalarOp))
    return Call(op, tuple(random_expr(rng, depth - 1) for _ in range(OPS[op].arity)))


def test_random_affine_round_trip() -> None:
    rng = random.Random(1234)
    for _ in range(1000):
        a = random_affine(rng)
        text = format_affine(a)
        assert parse_affine(text) == a, text


def test_random_expr_round_trip() -> None:
    rng = random.Random(5678)
    for _ in range(400):
        e = random_expr(rng)
        text = format_expr(e)
        parsed = parse_expr(text)
        assert format_expr(parsed) == text
        assert parsed == e, text


def test_random_statements_round_trip() -> None:
    rng = random.Random(91)
    for n in range(100):
        guards = tuple(
            Constraint(random_affine(rng, 2), rng.random() < 0.3) for _ in range(rng.randint(0, 2))
        )
        stmt = Stmt(
            loops=tuple(Loop(v, rng.choice([4, 17, "N"])) for v in VARS[: rng.randint(1, 4)]),
            target=Store("Y", tuple(random_affine(rng, 2) for _ in range(rng.randint(0, 3)))),
            update=rng.choice(list(Update)),
            value=random_expr(rng, 3),
            guards=guards,
            origin=Origin(f"aten.op_{n}.default", n, "m.py:1" if n % 2 else "", bool(n % 3))
            if n % 4
            else None,
        )
        text = format_stmt(stmt)
        assert parse_stmt(text) == stmt, text


# ---- errors --------------------------------------------------------------------------------------

BASE = """program p {
  input A: f32[8, 8]
  output C: f32[8, 8]
  for i in 0..8, j in 0..8:
    C[i, j] = %s
}
"""

LOOP = "program p {\n  input A: f32[8]\n  output C: f32[8]\n  %s\n}"


@pytest.mark.parametrize(
    "value, match",
    [
        ("A[i, j] $ 2", r"line 5, column 23: unexpected '\$'; expected one of .*'\+'"),
        ("A[i, j] A[i, j]", r"line 5, column 23: unexpected 'A'; expected .*end of line"),
        (
            "exq(A[i, j])",
            r"line 5, column 15: unknown function 'exq'; known functions: abs, .*exp, ",
        ),
        ("max(A[i, j])", r"max takes 2 arguments, got 1"),
        ("where(A[i, j], 1)", r"where takes 3 arguments, got 2"),
        ("f16(A[i, j], 1)", r"f16 takes 1 argument, got 2"),
        ("f17(A[i, j])", r"unknown function 'f17'.*casts: f64, f32, f16"),
        ("A[i*j, 0]", r"column 17: `i\*j` is not affine"),
        ("A[(i + 1)*(j - 1), 0]", r"`\(i \+ 1\)\*\(j - 1\)` is not affine"),
        ("A[i/2, j]", r"`/` is not allowed in an index expression; use `//`"),
        ("A[i // j, j]", r"`//` needs a positive integer constant"),
        ("A[i % 0, j]", r"`%` needs a positive integer constant"),
        ("A[A[i, j], j]", r"write a data-dependent index as `ind\(A\[i, j\]\)`"),
        ("A[i, 1.5]", r"index expressions are integers"),
        ("A[2*ind(A[i, j]), j]", r"an index term may hold one `ind\(...\)`"),
        ("ind(A[i, j])", r"`ind\(...\)` is a data-dependent index and may only stand inside"),
        ("i + 1", r"bare name 'i' is not a value.*index\(i\)"),
        ("A[i, j] // 2", r"`//` is only for index expressions"),
        ("where(A[i, j] > 0, 1, 2)", r"comparisons in values are functions"),
        ("A[i, j", r"line 6, column 1: unexpected '}'; expected one of ',', ']'"),
    ],
)
def test_value_errors(value: str, match: str) -> None:
    with pytest.raises(IRSyntaxError, match=match):
        parse_program(BASE % value)


def test_error_message_shows_source_line_and_caret() -> None:
    with pytest.raises(IRSyntaxError) as info:
        parse_program(BASE % "A[i*j, 0]")
    first, source, caret = str(info.value).split("\n")
    assert first.startswith("line 5, column 17: ")
    assert source == "      C[i, j] = A[i*j, 0]"
    assert caret == "  " + " " * 16 + "^"


@pytest.mark.parametrize(
    "text, match",
    [
        (
            "program p {\n  input A: f32[8]\n  output C: f32[8]\n"
            "  for i in 0..8:\n    C[i] = A[i]\n",
            r"line 5, column 16: unexpected end of input; .*missing its closing '}'",
        ),
        (
            "program p {\n  input A: f33[8]\n}",
            r"line 2, column 12: unknown dtype 'f33'; known: f64, f32",
        ),
        (
            "program p {\n  inptu A: f32[8]\n}",
            r"unknown tensor role 'inptu'; expected one of input, param",
        ),
        ("program p {\n  sym N = 3.5\n}", r"a symbol value must be an integer"),
        ("program p {\n  sim N = 3\n}", r"symbols are bound as `sym N = 128`"),
        (
            "program p {\n  output C: f32[8]\n  for i in 0..8,:\n    C[i] = 0\n}",
            r"unexpected ':'; expected a name",
        ),
        ("program p {\n  output C: f32[8]\n  for i in 1..8:\n    C[i] = 0\n}", r"loops start at 0"),
        (
            "program p {\n  output C: f32[8]\n  for i in 0..8\n    C[i] = 0\n}",
            r"line 3, column 16: unexpected end of line; expected one of ',', ':', 'in', 'where'",
        ),
        (
            "program p {\n  output C: f32[8]\n  for i in 0..8:\n    C[i] -= 1\n}",
            r"expected an update \(=, \+=",
        ),
        (
            "program p {\n  output C: f32[8]\n  for i in 0..8 where i != 3:\n    C[i] = 1\n}",
            r"`!=` is not affine",
        ),
        (
            "program p {\n  output C: f32[8]\n  for i in 0..8:\n    C[ind(C[i]) - ind(C[i])] = 1\n}",
            r"an index term may hold one `ind",
        ),
        (
            "program p {\n  output C: f32[8]\n  for i in 0..8:\n    C[i] = 0\n    C[i] += 1\n}",
            r"line 5, column 5: this statement is indented under the loop nest of line 3",
        ),
        (
            "program p {\n  output C: f32[8]\n  @op aten.add id=x\n  C[0] = 1\n}",
            r"unexpected 'x'; expected .*a number",
        ),
        ("", r"line 1, column 1: unexpected end of input; expected 'program'"),
        # hints for habits from other languages
        (LOOP % "for i in range(8):\n    C[i] = 1", r"loops are written `for i in 0..N"),
        (LOOP % "for i in 0..8:\n    C[i] = A[i]**2", r"powers are written pow\(a, b\)"),
        (LOOP % "for i in 0..8:\n    C[i] = 1;", r"no `;`"),
        (LOOP % "for i in 0..8:\n    C[i][0] = 1", r"index every dimension in one bracket"),
        (LOOP % '@op aten.add id=1 at "m.py\n  C[0] = 1', r"quoted string is not closed"),
    ],
)
def test_program_errors(text: str, match: str) -> None:
    with pytest.raises(IRSyntaxError, match=match):
        parse_program(text)


def test_stmt_and_expr_entry_points_reject_trailing_text() -> None:
    with pytest.raises(IRSyntaxError, match="expected .*end of input"):
        parse_stmt("C[0] = 1\nC[1] = 2")
    with pytest.raises(IRSyntaxError, match="unexpected"):
        parse_expr("A[i] B[i]")
    with pytest.raises(IRSyntaxError, match="function call `exp\\(i\\)` in an index expression"):
        parse_affine("exp(i)")
