"""The verifier accepts well-formed programs and names the program, the statement and the problem
for each malformed one."""

from __future__ import annotations

import re
import sys
import types
from dataclasses import replace

import pytest

from solar.errors import IRVerifyError
from solar.ir.affine import Affine, var
from solar.ir.nodes import Call, Const, Indirect, Load, Program, Stmt, Store
from solar.ir.parser import parse_program
import solar.ir.verify as verify_module
from solar.ir.scalar_ops import ScalarOp
from solar.ir.verify import verify, verify_stmt

from .test_parser import PROGRAMS

GOOD = """
program attention_like {
  sym L = 16
  input X: f32[L, 8]
  param W: f32[8, 8]
  input I: i64[L]
  param E: f32[100, 8]
  temp S: f32[L, L]
  temp Mx: f32[L]
  output Y: f32[L, 8]
  output G: f32[L, 8]
  output R: f32[4, 4]
  @op aten.mm.default id=0
  for q in 0..L, k in 0..L:
    S[q, k] = 0
  for q in 0..L, k in 0..L, d in 0..8 where k <= q:
    S[q, k] += X[q, d] * X[k, d]
  for q in 0..L:
    Mx[q] = -inf
  for q in 0..L, k in 0..L where k <= q:
    Mx[q] max= S[q, k]
  for q in 0..L, d in 0..8:
    Y[q, d] = 0.0
  # X[q - k] is inside X only because of the guard (exact check)
  for q in 0..L, k in 0..L, d in 0..8 where k <= q:
    Y[q, d] += exp(S[q, k] - Mx[q]) * X[q - k, d] * W[d, d]
  for t in 0..L, d in 0..8:
    G[t, d] = E[ind(I[t]), d] + E[ind(I[t]) + 1, d] + index(t - d)
  # i - 2*(i // 2) is i mod 2: intervals give [-2, 3], the exact check proves [0, 1]
  for i in 0..4, j in 0..4:
    R[i, j] = Y[4*i + j, i - 2*(i // 2)] + Y[((4*i + j) // 3), (i + j) % 8]
}
"""


def good() -> Program:
    return parse_program(GOOD)


@pytest.mark.parametrize("polyhedral", ["present", "absent"])
def test_good_program_passes(polyhedral: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if polyhedral == "absent":  # the exact checks enumerate the domain instead
        monkeypatch.setitem(sys.modules, "solar.ir.polyhedral", None)
    program = good()
    verify(program)
    for stmt in program.stmts:
        verify_stmt(program, stmt)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_round_trip_table_programs_are_well_formed(program: Program) -> None:
    verify(program)


def test_message_names_program_statement_and_problem() -> None:
    program = parse_program("""program p {
      input A: f32[8]
      output C: f32[8]
      for i in 0..8:
        C[i] = A[i + 1]
    }""")
    with pytest.raises(IRVerifyError) as info:
        verify(program)
    first, *stmt_lines = str(info.value).split("\n")
    assert first == (
        "program 'p', statement 0: load A[i + 1]: index 0 `i + 1` ranges over [1, 8] but "
        "dimension 0 of 'A' has size 8 (valid 0..7)"
    )
    assert [line.strip() for line in stmt_lines] == ["for i in 0..8:", "C[i] = A[i + 1]"]


def _program(body: str, decls: str = "input A: f32[8, 8]\n  output C: f32[8, 8]") -> Program:
    return parse_program(f"program p {{\n  {decls}\n{body}\n}}")


FILL = "  for i in 0..8, j in 0..8:\n    C[i, j] = 0\n"


@pytest.mark.parametrize(
    "decls, body, match",
    [
        # declarations
        (
            "input A: f32[8]\n  output A: f32[8]",
            "  A[0] = 1",
            r"program 'p': tensor 'A' is declared twice",
        ),
        ("sym N = 2\n  sym N = 3\n  output C: f32[N]", "  C[0] = 1", r"symbol 'N' is bound twice"),
        ("output C: f32[N]", "  C[0] = 1", r"tensor 'C' dimension 0: size symbol 'N' is not bound"),
        ("output C: f32[0]", "  C[0] = 1", r"tensor 'C' dimension 0: size 0 is not positive"),
        ("sym N = 0\n  output C: f32[N]", "  C[0] = 1", r"symbol 'N' = 0: sizes must be positive"),
        # loops
        (
            None,
            "  for i in 0..N:\n    C[i, 0] = 1",
            r"statement 0: loop 'i': size symbol 'N' is not bound",
        ),
        (None, "  for i in 0..0:\n    C[i, 0] = 1", r"loop 'i': size 0 is not positive"),
        (None, "  for i in 0..8, i in 0..8:\n    C[i, i] = 1", r"loop variable 'i' is bound twice"),
        # tensors and index counts
        (None, "  for i in 0..8:\n    D[i] = 1", r"store D\[i\] names undeclared tensor 'D'"),
        (
            None,
            FILL + "  for i in 0..8:\n    C[i, 0] = B[i]",
            r"statement 1: load B\[i\] names undeclared",
        ),
        (
            None,
            "  for i in 0..8:\n    C[i] = 1",
            r"store C\[i\] has 1 index terms but 'C' has 2 dimensions",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j] = A[i, j, 0]",
            r"load A\[i, j, 0\] has 3 index",
        ),
        # loop variables
        (
            None,
            "  for i in 0..8:\n    C[i, j] = 1",
            r"store C\[i, j\] uses 'j', which is not a loop variable",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j] = A[i, k]",
            r"load A\[i, k\] uses 'k'.*loops: i, j",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8 where k >= 0:\n    C[i, j] = 1",
            r"guard `k >= 0` uses 'k'",
        ),
        (None, "  for i in 0..8, j in 0..8:\n    C[i, j] = index(m)", r"index\(m\) uses 'm'"),
        (
            "input A: f32[8, 8]\n  input I: i32[8]\n  output C: f32[8, 8]",
            "  for i in 0..8, j in 0..8:\n    C[i, j] = A[ind(I[i]) + z, j]",
            r"uses 'z', which is not a loop",
        ),
        # bounds
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j + 1] = 1",
            r"store C\[i, j \+ 1\]: index 1 .* \[1, 8\]",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j] = A[i, 2*j - 1]",
            r"load A\[i, 2\*j - 1\]: index 1 `2\*j - 1` ranges over \[-1, 13\]",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8 where j <= i + 1:\n    C[i, j] = A[i - j, 0]",
            r"load A\[i - j, 0\] is out of bounds: index 0 `i - j` = -1 at i=0, j=1",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j] = A[(i + j + 2) // 2, 0]",
            r"load A\[\(\(i \+ j \+ 2\) // 2\), 0\] is out of bounds: index 0 .* = 8 at i=7, j=7",
        ),
        # roles and dataflow
        (
            None,
            "  for i in 0..8, j in 0..8:\n    A[i, j] = 1",
            r"stores into input 'A', which is read-only",
        ),
        ("param A: f32[8, 8]\n  output C: f32[8, 8]", "  A[0, 0] = 1", r"stores into param 'A'"),
        (
            "input A: f32[8, 8]\n  temp T: f32[8]\n  output C: f32[8, 8]",
            "  for i in 0..8, j in 0..8:\n    C[i, j] = T[i]",
            r"statement 0: reads temp 'T' before any earlier",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j] = C[i, j] * 2",
            r"reads output 'C' before",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j] += A[i, j]",
            r"accumulates \(\+=\) into 'C', which no earlier statement initialises; "
            r"add e.g. `C\[...\] = 0.0`",
        ),
        (
            None,
            "  for i in 0..8, j in 0..8:\n    C[i, j] max= A[i, j]",
            r"add e.g. `C\[...\] = -inf`",
        ),
        (
            "input A: f32[8, 8]\n  output C: f32[8, 8]\n  output D: f32[8]",
            FILL,
            r"output 'D' is never written",
        ),
        # indirect index dtype
        (
            None,
            FILL + "  for i in 0..8, j in 0..8:\n    C[i, j] = A[ind(A[i, j]), j]",
            r"statement 1: data-dependent index ind\(A\[i, j\]\) has a float value; .*i64\(...\)",
        ),
        (
            None,
            FILL + "  for i in 0..8, j in 0..8:\n    C[i, j] = A[ind(f16(index(i))), j]",
            r"has a float value",
        ),
    ],
)
def test_each_check_fails(decls: str | None, body: str, match: str) -> None:
    program = _program(body) if decls is None else _program(body, decls)
    with pytest.raises(IRVerifyError, match=match):
        verify(program)


def test_indirect_of_unknown_dtype_is_accepted() -> None:
    verify(_program(FILL + "  for i in 0..8, j in 0..8:\n    C[i, j] = A[ind(round(A[i, j])), j]"))
    verify(_program(FILL + "  for i in 0..8, j in 0..8:\n    C[i, j] = A[ind(i64(A[i, j])), j]"))


def _with_stmt(program: Program, k: int, **changes) -> Program:
    stmts = list(program.stmts)
    stmts[k] = replace(stmts[k], **changes)
    return replace(program, body=tuple(stmts))


def test_checks_the_text_form_cannot_express() -> None:
    base = _program(FILL)
    i, j = var("i"), var("j")
    bad_call = Call(ScalarOp.EXP, (Const(1.0), Const(2.0)))
    with pytest.raises(IRVerifyError, match=r"call exp\(...\) has 2 arguments, expected 1"):
        verify(_with_stmt(base, 0, value=bad_call))
    # a data-dependent store (scatter) is checked like a data-dependent load
    verify(_with_stmt(base, 0, target=Store("C", (Indirect(Const(0)), j))))
    with pytest.raises(IRVerifyError, match=r"data-dependent index ind\(1.5\) has a float value"):
        verify(_with_stmt(base, 0, target=Store("C", (Indirect(Const(1.5)), j))))
    with pytest.raises(IRVerifyError, match=r"tensor name 'fc1.weight' is not an identifier"):
        verify(
            replace(base, tensors=(replace(base.tensors[0], name="fc1.weight"), base.tensors[1]))
        )
    with pytest.raises(IRVerifyError, match=r"size -3 is not positive"):
        verify(replace(base, tensors=(replace(base.tensors[0], shape=(8, -3)), base.tensors[1])))
    # the verifier is happy with the unmodified program
    verify(_with_stmt(base, 0, value=Load("A", (i, j))))


def test_verify_stmt_checks_one_statement_without_dataflow() -> None:
    program = _program(
        "  for i in 0..8, j in 0..8:\n    C[i, j] += A[i, j]\n  for i in 0..8:\n    C[i, 8] = 1"
    )
    verify_stmt(
        program, program.stmts[0]
    )  # accumulating first is a dataflow problem, not checked here
    with pytest.raises(IRVerifyError, match=r"program 'p', statement 1: store C\[i, 8\]: index 1"):
        verify_stmt(program, program.stmts[1])
    loose = Stmt(
        (), Store("C", (Affine(const=0), Affine(const=9))), program.stmts[0].update, Const(0)
    )
    with pytest.raises(IRVerifyError, match=r"program 'p', statement: store C\[0, 9\]"):
        verify_stmt(program, loose)


# ---- the exact fallback of the bounds check ------------------------------------------------------

# (the guard implies the index is >= 0 without being the index: the exact check decides it)
GUARDED = "  for i in 0..{n}, j in 0..{n} where 2*j <= 2*i:\n    C[i - j, 0] = 1"


def test_enumeration_decides_when_polyhedral_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "solar.ir.polyhedral", None)  # import now raises ImportError
    verify(_program(GUARDED.format(n=8)))
    # a domain past the enumeration limit cannot be decided: the interval violation is reported
    big = _program(GUARDED.format(n=2000), "output C: f32[2000, 1]")
    with pytest.raises(
        IRVerifyError, match=r"ranges over \[-1999, 1999\].*too large for an exact check"
    ):
        verify(big)


def test_polyhedral_access_in_bounds_is_used_when_present(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def access_in_bounds(program, stmt, tensor, index) -> bool:
        calls.append((tensor, index))
        return True

    fake = types.ModuleType("solar.ir.polyhedral")
    fake.access_in_bounds = access_in_bounds  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "solar.ir.polyhedral", fake)
    verify(_program(GUARDED.format(n=2000), "output C: f32[2000, 1]"))
    assert calls == [("C", (var("i") - var("j"), Affine()))]


def test_sizes_beyond_int64_are_checked_exactly():
    # found by the parser fuzzer: the enumeration limit was computed in int64 and overflowed
    from solar.ir.parser import parse_program

    text = """program big {
  sym c = 18446744073709551617
  input a: f64[c]
  output y: f64[c]
  for i in 0..c where i >= 1:
    y[i] = a[i + 1] * 2.0
}
"""
    with pytest.raises(IRVerifyError, match="a\\[i \\+ 1\\] is out of bounds"):
        verify(parse_program(text))


@pytest.mark.parametrize(
    "index, verdict",
    [
        # found by the parser fuzzer: a modulus or coefficient beyond int64 overflowed the enumeration
        ("((2*i) % 99999999999999999999) + 1", "= 1 at i=0"),
        ("((18446744073709551617*i) % 3) + 1", "= 1 at i=0"),
        ("((2*i) % 99999999999999999999) // 4", None),
        # 2**62 * i wraps in int64 at i = 2 without an error (-2**63 // (2**62 + 1) = -2, a false
        # violation); exactly, 2*(2**63 // (2**62 + 1)) - 2*(2 // 2) = 0. Intervals say [-2, 2].
        ("2*((4611686018427387904*i) // 4611686018427387905) - 2*(i // 2)", None),
    ],
)
def test_enumeration_is_exact_beyond_int64(monkeypatch: pytest.MonkeyPatch, index, verdict):
    monkeypatch.setitem(sys.modules, "solar.ir.polyhedral", None)  # decided by enumeration
    last = 2 if "4611686018427387904" in index else 1
    text = f"""program a {{
  output a: f64[1, 1]
  for i in 0..3, j in 0..1 where i <= {last}:
    a[{index}, 0] = 0
}}"""
    if verdict is None:
        verify(parse_program(text))
        return
    with pytest.raises(IRVerifyError, match=re.escape(verdict)):
        verify(parse_program(text))


# a padded window (a convolution's or a pool's): the guards are the index itself
PADDED = (
    "  for i in 0..{n}, r in 0..3 where 2*i + r - 1 >= 0 and {top} - 2*i - r >= 0:\n"
    "    C[i, 0] = A[2*i + r - 1, 0]"
)


def test_guards_that_bound_the_index_itself_decide_without_a_count(monkeypatch) -> None:
    def no_count(*args):
        raise AssertionError("the guards decide this access")

    monkeypatch.setattr(verify_module, "_exact_check", no_count)
    decls = "input A: f32[{m}, 1]\n  output C: f32[{n}, 1]"
    # 2i + r - 1 ranges over [-1, 2n]; the guards keep it in 0..2n-1 (A has 2n rows)
    verify(_program(PADDED.format(n=2000, top=4000), decls.format(m=4000, n=2000)))


def test_guards_that_bound_the_index_too_loosely_still_go_to_the_exact_check() -> None:
    # the upper guard allows index 3999 (i = 1999, r = 2), one past A's 3999 rows
    decls = "input A: f32[3999, 1]\n  output C: f32[2000, 1]"
    with pytest.raises(IRVerifyError, match=r"load A\[.*\] is out of bounds: index 0 .* = 3999 at i=1999, r=2"):
        verify(_program(PADDED.format(n=2000, top=4000), decls))
