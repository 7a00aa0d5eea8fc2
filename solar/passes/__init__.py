"""IR -> IR passes that make the structure of a program visible to the counters: affine conditions
and known-constant regions become guards (`structure.propagate`), work nobody needs is removed
(`demand.restrict`), and elementwise results read at few points are computed where they are read
(`inline.sink`). Every pass keeps the program's outputs unchanged for finite input data, which
`solar verify` checks by running the optimised program."""

from __future__ import annotations

from dataclasses import replace

from solar.ir.nodes import Program, Role
from solar.passes.demand import restrict
from solar.passes.inline import sink
from solar.passes.structure import propagate

MAX_ROUNDS = 4


def optimize(program: Program) -> Program:
    """Structure propagation, demand restriction and sinking to a fixpoint, then unused temps
    dropped."""
    for _ in range(MAX_ROUNDS):
        new = restrict(sink(restrict(propagate(program))))
        if new.stmts == program.stmts:
            break
        program = new
    return drop_unused_temps(program)


def drop_unused_temps(program: Program) -> Program:
    used = {s.target.tensor for s in program.stmts}
    used |= {ld.tensor for s in program.stmts for ld in s.loads()}
    tensors = tuple(t for t in program.tensors if t.role is not Role.TEMP or t.name in used)
    return program if len(tensors) == len(program.tensors) else replace(program, tensors=tensors)


__all__ = ["drop_unused_temps", "optimize", "propagate", "restrict", "sink"]
