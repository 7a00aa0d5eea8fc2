"""IR -> IR passes that make the structure of a program visible to the counters: affine conditions
and known-constant regions become guards (`structure.propagate`), work nobody needs is removed
(`demand.restrict`), and elementwise results read at few points are computed where they are read
(`inline.sink`). Every pass keeps the program's outputs unchanged for finite input data, which
`solar verify` checks by running the optimised program."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import replace
from typing import Callable

from solar.errors import IRVerifyError
from solar.heap import settled
from solar.ir.defuse import defuse
from solar.ir.nodes import Program, Role
from solar.ir.verify import verify
from solar.passes.demand import restrict
from solar.passes.inline import sink
from solar.passes.structure import propagate

MAX_ROUNDS = 4
PIPELINE: tuple[Callable[[Program], Program], ...] = (propagate, restrict, sink, restrict)

# Run the verifier after every pass: a pass that breaks a program is named at once. On inside
# `verifying(True)` (`solar ... --debug` passes it down through solar.api.load; the test suite turns
# it on around every test, tests/conftest.py).
_VERIFY: ContextVar[bool] = ContextVar("verify_between_passes", default=False)


@contextlib.contextmanager
def verifying(on: bool) -> Iterator[None]:
    """Within the block, `optimize` verifies the program after every pass (or not)."""
    token = _VERIFY.set(on)
    try:
        yield
    finally:
        _VERIFY.reset(token)


@settled
def optimize(
    program: Program, verify_each: bool | None = None, pipeline: tuple[Callable[[Program], Program], ...] | None = None
) -> Program:
    """Structure propagation, demand restriction and sinking to a fixpoint, then unused temps
    dropped. `verify_each` (default: as `verifying` says) verifies after every pass;
    `pipeline`: PIPELINE with its passes wrapped (stitch.lower_shared watches what `sink` does)."""
    check = _VERIFY.get() if verify_each is None else verify_each
    for _ in range(MAX_ROUNDS):
        new = program
        for run_pass in pipeline or PIPELINE:
            new = run_pass(new)
            if check:
                _verify_after(run_pass, new)
        if new.stmts == program.stmts:
            break
        program = new
    return drop_unused_temps(program)


def _verify_after(run_pass: Callable[[Program], Program], program: Program) -> None:
    try:
        verify(program)
    except IRVerifyError as exc:
        raise IRVerifyError(f"after pass {run_pass.__module__}.{run_pass.__name__}: {exc}") from None


def drop_unused_temps(program: Program) -> Program:
    used = defuse(program).used
    tensors = tuple(t for t in program.tensors if t.role is not Role.TEMP or t.name in used)
    return program if len(tensors) == len(program.tensors) else replace(program, tensors=tensors)


__all__ = ["PIPELINE", "drop_unused_temps", "optimize", "propagate", "restrict", "sink"]
