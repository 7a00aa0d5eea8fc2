"""Checking a candidate IR against the original: bind its symbols to a case's shapes, verify it,
run it in the interpreter on the case's inputs and compare every output. A failure is described
for the model to fix: which output, the max error, and a small slice of expected and actual."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solar.errors import SolarError
from solar.frontends.compare import relative_error
from solar.frontends.llm.reference import Case
from solar.frontends.llm.symbolic import bind, solve
from solar.ir.interp import program_cost, run
from solar.ir.nodes import Program, Role
from solar.ir.verify import verify

BUDGET = 3e7  # interpreter points one check may spend


@dataclass(frozen=True)
class Outcome:
    label: str
    ok: bool
    error: float  # max relative error over the outputs (inf when not run)
    message: str = ""  # what went wrong, written for the model
    skipped: bool = False  # too large for the interpreter: neither a pass nor a failure


def check_case(program: Program, case: Case) -> Outcome:
    try:
        values = solve(
            program,
            [x.shape for x in case.inputs],
            {k: v.shape for k, v in case.params.items()},
            [y.shape for y in case.outputs],
        )
        bound = bind(program, values)
        verify(bound)
    except SolarError as exc:
        return Outcome(case.label, False, float("inf"), f"at {case.label}: {exc}")
    if program_cost(bound) > BUDGET:
        return Outcome(
            case.label, False, float("inf"), "too large for the interpreter", skipped=True
        )
    feed = {t.name: x for t, x in zip(bound.with_role(Role.INPUT), case.inputs)}
    feed.update({t.name: case.params[t.name] for t in bound.with_role(Role.PARAM)})
    try:
        results = run(bound, feed)
    except SolarError as exc:
        return Outcome(
            case.label, False, float("inf"), f"at {case.label}: running the IR failed: {exc}"
        )
    worst, notes = 0.0, []
    for decl, expected in zip(bound.with_role(Role.OUTPUT), case.outputs):
        got = results[decl.name]
        error = relative_error(got, expected)
        worst = max(worst, error)
        if not error <= case.tolerance:
            notes.append(_difference(decl.name, got, expected, error, case.tolerance))
    if notes:
        sizes = ", ".join(f"{k}={v}" for k, v in values.items())
        return Outcome(
            case.label, False, worst, f"at {case.label} (symbols {sizes}): " + "; ".join(notes)
        )
    return Outcome(case.label, True, worst)


def _difference(name: str, got: np.ndarray, expected: np.ndarray, error: float, tol: float) -> str:
    e = np.asarray(expected, dtype=np.float64)
    g = np.asarray(got, dtype=np.float64)
    if g.shape != e.shape and g.size == e.size:
        e = e.reshape(g.shape)
    if g.shape != e.shape:
        return f"output {name} has shape {g.shape}, the program's has {e.shape}"
    diff = np.abs(np.nan_to_num(g - e, nan=np.inf))
    where = (
        tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))
        if diff.size
        else ()
    )
    lead = where[:-1] if where else ()
    row = (*lead, slice(None, 6)) if g.ndim else ()
    fmt = lambda a: np.array2string(np.asarray(a), precision=4, separator=", ", threshold=12)
    return (
        f"output {name}: max relative error {error:.3g} (tolerance {tol:g}), worst at index "
        f"{list(where)}; expected {name}[{_index_text(lead)}:6] = {fmt(e[row])}, the IR gave {fmt(g[row])}"
    )


def _index_text(lead: tuple[int, ...]) -> str:
    return "".join(f"{i}, " for i in lead)
