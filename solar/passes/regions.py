"""Regions as conjunctions of affine constraints, moved between a tensor's index space (variables
`_x0, _x1, ...`, one per dimension) and the loop variables of a statement; exact emptiness and
point counts through solar.ir.polyhedral."""

from __future__ import annotations

from dataclasses import replace

from solar.ir import polyhedral
from solar.ir.affine import Affine, Constraint, value_range, var
from solar.ir.nodes import IndexTerm, Indirect, Program, Stmt
from solar.passes.fold import Piece


def axis(k: int) -> str:
    """The variable of dimension k in a tensor's index space."""
    return f"_x{k}"


def points(program: Program, stmt: Stmt) -> int:
    return int(polyhedral.domain_size(program, stmt))


def is_empty(program: Program, stmt: Stmt) -> bool:
    return points(program, stmt) == 0


def box_ranges(program: Program, stmt: Stmt) -> dict[str, tuple[int, int]]:
    return {v: (0, n - 1) for v, n in program.extents(stmt).items()}


def holds_on_box(program: Program, stmt: Stmt, c: Constraint) -> bool:
    """True when `c` holds at every point of the statement's loop box (interval check)."""
    lo, hi = value_range(c.expr, box_ranges(program, stmt))
    return lo == hi == 0 if c.equality else lo >= 0


def with_guards(program: Program, stmt: Stmt, extra: Piece) -> Stmt:
    """`stmt` with the constraints of `extra` added (those already implied by the box dropped)."""
    new = [g for g in extra if g not in stmt.guards and not holds_on_box(program, stmt, g)]
    return replace(stmt, guards=stmt.guards + tuple(dict.fromkeys(new))) if new else stmt


def pull(region: Piece, index: tuple[IndexTerm, ...]) -> Piece | None:
    """A tensor-space region seen through an access: the constraints on the loop variables under
    which the accessed element lies in the region (None if a dimension it uses is indirect)."""
    mapping: dict[str, Affine] = {}
    used = set().union(*(c.variables for c in region)) if region else set()
    for k, term in enumerate(index):
        if axis(k) not in used:
            continue
        if isinstance(term, Indirect):
            return None
        mapping[axis(k)] = term
    return tuple(c.substitute(mapping) for c in region)


def store_region(program: Program, stmt: Stmt) -> Piece | None:
    """The elements `stmt` writes as a tensor-space region, when its target index is distinct bare
    loop variables or constants, every loop variable indexes the target and the guards use only
    target variables (None otherwise)."""
    if not stmt.target.is_affine:  # a data-dependent store (scatter): no known region
        return None
    shape = program.shape(stmt.target.tensor)
    extents = program.extents(stmt)
    rename: dict[str, Affine] = {}
    region: list[Constraint] = []
    for k, e in enumerate(stmt.target.index):
        if e.is_const:
            region.append(Constraint(var(axis(k)) - e.const, equality=True))
        elif e.is_plain_var and e.terms[0][0] not in rename:
            v = e.terms[0][0]
            rename[v] = var(axis(k))
            if extents[v] < shape[k]:
                region.append(Constraint(extents[v] - 1 - var(axis(k))))
        else:
            return None
    if set(rename) != set(stmt.loop_vars):
        return None
    for g in stmt.guards:
        if not g.variables <= set(rename):
            return None
        region.append(g.substitute(rename))
    return tuple(region)


def meets(program: Program, stmt: Stmt, region: Piece) -> bool:
    """True when `stmt` writes at least one element of the tensor-space `region`."""
    pulled = pull(region, stmt.target.index)
    return pulled is None or not is_empty(program, replace(stmt, guards=stmt.guards + pulled))
