"""Every entry of the JAX lowering table, checked against the real primitive on fresh random
inputs: each case's program is traced, every equation of the primitive (wherever it occurs) runs
on its own in JAX and in the IR interpreter, and the whole program runs in both; outputs must agree."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")

from jax.extend.core import ClosedJaxpr, Jaxpr, JaxprEqn

from solar.frontends.jax.check import check_eqn, check_traced
from solar.frontends.jax.convert import convert
from solar.frontends.jax.loader import Arg, JaxTraced, trace_callable
from solar.frontends.jax.lowerings import LOWERINGS
from solar.ir.parser import parse_program
from tests.frontends.jax.cases import BY_PROGRAM, CASES, Case


def _traced(case: Case) -> JaxTraced:
    if case.build is not None:
        closed = case.build()
        args = tuple(Arg("input", f"x{k}") for k in range(len(closed.jaxpr.invars)))
        return JaxTraced(closed, "case", None, (), None, args)
    return trace_callable(case.fn, case.args, name="case")


def _eqns(jaxpr: Jaxpr) -> Iterator[JaxprEqn]:
    """Every equation, including those of sub-jaxprs (call bodies, loop bodies)."""
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            if isinstance(value, ClosedJaxpr):
                yield from _eqns(value.jaxpr)
            elif isinstance(value, Jaxpr):
                yield from _eqns(value)


def test_every_lowering_has_a_case():
    missing = sorted(p.name for p in LOWERINGS if p not in CASES and p not in BY_PROGRAM)
    assert not missing, f"lowerings without a test case: {missing}"


def _ids(x: Any) -> str | None:
    return x.name if hasattr(x, "multiple_results") else None


@pytest.mark.parametrize(
    "prim,case", [(p, case) for p, cases in CASES.items() for case in cases], ids=_ids
)
def test_lowering_matches_jax(prim, case):
    traced = _traced(case)
    found = [e for e in _eqns(traced.jaxpr.jaxpr) if e.primitive is prim]
    assert found, f"the case's program has no {prim.name} equation"
    top = [e for e in traced.jaxpr.jaxpr.eqns if e.primitive is prim]
    for eqn in top or found:
        check = check_eqn(eqn, seed=0)
        assert check.mode == "op" and check.ok, check
    result = check_traced(traced, seed=1)
    assert result.ok and not result.unchecked, result.checks


@pytest.mark.parametrize(
    "prim,case", [(p, case) for p, cases in CASES.items() for case in cases if case.fn], ids=_ids
)
def test_lowered_program_text_round_trips(prim, case):
    program, _ = convert(_traced(case))[:2]
    assert parse_program(str(program)) == program
