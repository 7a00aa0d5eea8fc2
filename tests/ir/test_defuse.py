"""solar.ir.defuse: writers, readers and distinct loads per statement; the loads of a statement
kept by its identity serve the def-use of a rebuilt program that keeps the statement."""

from __future__ import annotations

from dataclasses import replace

from solar.ir import defuse as defuse_module
from solar.ir.defuse import DefUse, distinct_loads
from solar.ir.parser import parse_program

TEXT = """program p {
  input x: f32[8]
  temp a: f32[8]
  output o: f32[8]
  for i in 0..8:
    a[i] = x[i] * x[i]
  for i in 0..8:
    o[i] = a[i] + x[i] + a[i]
}"""


def test_writers_readers_and_distinct_loads_in_order():
    program = parse_program(TEXT)
    du = DefUse(program)
    assert du.writers == {"a": [0], "o": [1]}
    assert du.readers == {"x": [0, 1], "a": [1]}
    assert [[ld.tensor for ld in loads] for loads in du.loads] == [["x"], ["a", "x"]]


def test_a_kept_statement_reuses_its_loads_and_an_equal_new_one_gets_its_own():
    program = parse_program(TEXT)
    stmt = program.stmts[1]
    first = distinct_loads(stmt)
    rebuilt = program.with_stmts(list(program.stmts))  # the same statement objects
    assert DefUse(rebuilt).loads[1] is first
    twin = replace(stmt)  # equal, not the same object: computed again, the same loads
    assert twin is not stmt and distinct_loads(twin) == first
    assert defuse_module._LOADS[id(twin)][0] is twin


def test_the_loads_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(defuse_module, "LOADS_KEPT", 2)
    defuse_module._LOADS.clear()
    program = parse_program(TEXT)
    for s in (*program.stmts, replace(program.stmts[0])):
        distinct_loads(s)
    assert len(defuse_module._LOADS) <= 2
