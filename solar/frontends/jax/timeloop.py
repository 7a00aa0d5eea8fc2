"""Loops over time: how `scan`, static `while` loops and cumulative primitives become IR loops
without unrolled copies, and how such programs are executed.

Convention. A *time variable* is a loop variable named `t<k>` (the shared builders name their loops
`i<k>` and `r<k>`). A *time block* is a maximal run of consecutive statements whose FIRST loop is the
same time variable; it means

    for t in 0..T-1:          # sequentially
        statement 1 at t; statement 2 at t; ...

so a value computed at step t (a carry) is visible to every statement of step t+1. Inside a block,
further time blocks nest (their statements have both variables, the outer one first). Values that
live inside one step are stored in tensors with a leading time dimension (`x[t, ...]`), carries in
tensors with T+1 slots (`c[0]` = the initial value, `c[t+1]` = the value after step t), so every
statement stays a plain affine loop nest that the analyses count exactly; only the order of
execution differs from the plain interpreter (solar.ir.interp runs each statement over its whole
domain), hence `run` here."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from solar.frontends.views import View
from solar.ir.affine import Affine, Constraint, const, var
from solar.ir.dtypes import DType

# _exec runs one statement in place on the arrays; solar.ir.interp has no public form of it yet.
from solar.ir.interp import DEFAULT_CHUNK_ELEMENTS, _exec, domain_points, run_all
from solar.ir.nodes import Program, Role, Stmt, TensorDecl, map_indices
from solar.ir.scalar_ops import Update

TIME_VAR = re.compile(r"t\d+")
STEP_OVERHEAD_POINTS = 2000  # interpreter cost of one statement execution, in iteration points


def is_time_var(name: str) -> bool:
    return TIME_VAR.fullmatch(name) is not None


def time_var(stmt: Stmt) -> str | None:
    """The time variable of the block `stmt` belongs to (its first loop), or None."""
    if stmt.loops and is_time_var(stmt.loops[0].var):
        return stmt.loops[0].var
    return None


# ---- building: a builder whose statements all run inside one time loop -----------------------


@dataclass
class TimeBuilder:
    """Duck-types ProgramBuilder (declare, temp, emit, tensors) for the body of a time loop.

    Every statement gets the loop `var in 0..extent` in front of its own loops; every temporary it
    creates gets a leading dimension of `extent` indexed by `var`, so each step has its own slot.
    Tensors declared elsewhere (carries, inputs) are indexed exactly as the caller says."""

    parent: Any  # a ProgramBuilder or an enclosing TimeBuilder
    var: str
    extent: int
    timed: set[str] = field(default_factory=set)
    wholes: dict[str, View] = field(default_factory=dict)  # temp name -> its view with the time dim

    @property
    def tensors(self) -> dict[str, TensorDecl]:
        return self.parent.tensors

    @property
    def stmts(self) -> list[Stmt]:
        return self.parent.stmts

    @property
    def index(self) -> Affine:
        return var(self.var)

    def declare(self, hint: str, shape: Sequence[int], dtype: DType, role: Role) -> str:
        return self.parent.declare(hint, shape, dtype, role)

    def temp(self, hint: str, shape: Sequence[int], dtype: DType) -> View:
        whole = self.parent.temp(hint, (self.extent, *shape), dtype)
        self.timed.add(whole.base)
        self.wholes[whole.base] = whole
        t = self.index
        return View(tuple(shape), dtype, lambda idx: whole.at((t, *idx)), base=whole.base)

    def emit(
        self,
        loops: Sequence[tuple[str, int]],
        target: str,
        index: Sequence[Affine],
        update: Update,
        value: Any,
        guards: Sequence[Constraint] = (),
    ) -> None:
        index = tuple(index)
        if target in self.timed:
            index = (self.index, *index)
        self.parent.emit([(self.var, self.extent), *loops], target, index, update, value, guards)


# ---- execution: the reference semantics of time blocks ---------------------------------------


def run(
    program: Program,
    inputs: Mapping[str, np.ndarray],
    *,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
) -> dict[str, np.ndarray]:
    """Run `program` like solar.ir.interp.run, executing time blocks step by step."""
    arrays = run_all(replace(program, stmts=()), inputs)
    execute(program, program.stmts, arrays, chunk_elements)
    return {t.name: arrays[t.name] for t in program.with_role(Role.OUTPUT)}


def execute(
    program: Program, stmts: Sequence[Stmt], arrays: dict[str, np.ndarray], chunk: int
) -> None:
    k = 0
    while k < len(stmts):
        tv = time_var(stmts[k])
        if tv is None:
            _exec(program, stmts[k], arrays, chunk, True)
            k += 1
            continue
        end = k
        while end < len(stmts) and time_var(stmts[end]) == tv:
            end += 1
        block = stmts[k:end]
        for step in range(program.size(block[0].loops[0].extent)):
            execute(program, [specialise(s, step) for s in block], arrays, chunk)
        k = end


def specialise(stmt: Stmt, step: int) -> Stmt:
    """`stmt` with its first (time) loop removed and the variable replaced by `step`."""
    name = stmt.loops[0].var
    mapping = {name: const(step)}

    def sub(e: Affine) -> Affine:
        return e.substitute(mapping)

    return replace(
        stmt,
        loops=stmt.loops[1:],
        target=replace(stmt.target, index=tuple(sub(e) for e in stmt.target.index)),
        value=map_indices(stmt.value, sub),
        guards=tuple(g.substitute(mapping) for g in stmt.guards),
    )


def cost(program: Program) -> int:
    """Interpreter work of `run`: iteration points, plus a fixed overhead per statement execution
    and the copy a statement reading its own target makes, for every step of every time block."""
    total = 0
    for stmt in program.stmts:
        executions = 1
        for loop in stmt.loops:
            if not is_time_var(loop.var):
                break
            executions *= program.size(loop.extent)
        per_run = STEP_OVERHEAD_POINTS
        if executions > 1 and any(ld.tensor == stmt.target.tensor for ld in stmt.loads()):
            per_run += program.numel(stmt.target.tensor)
        total += domain_points(program, stmt) + executions * per_run
    return total


__all__ = ["TimeBuilder", "cost", "execute", "is_time_var", "run", "time_var"]
