"""Images that are boxes, and their unions, counted without isl (solar.ir.polyhedral asks here
first): an access over a box domain whose every index dimension is a constant, an indirect term, or
c*v + d with its own loop variable v touches a product of arithmetic progressions, and a union of
such products is swept exactly."""

from __future__ import annotations

import math
from typing import Literal

from solar.ir.affine import clip_ranges, is_box
from solar.ir.nodes import IndexTerm, Indirect, Load, Program, Stmt, Store, term_variables

IndirectMode = Literal["min", "max"]
Access = Load | Store


def indirect_values(index: tuple[IndexTerm, ...], guarded: bool) -> int:
    """How many values an indirect dimension takes in "min" mode: its `distinct` claim when the
    access is a product of that dimension and the others (one indirect term, no guards, no loop
    variable shared between the indirect value and the other dimensions: every value it takes
    then meets every element the other dimensions touch), else 1 (docs/BOUNDS.md, MoE routing)."""
    indirect = [t for t in index if isinstance(t, Indirect)]
    if guarded or len(indirect) != 1 or indirect[0].distinct == 1:
        return 1
    others: set[str] = set()
    for t in index:
        if not isinstance(t, Indirect):
            others |= t.variables
    return 1 if term_variables(indirect[0]) & others else indirect[0].distinct


# A progression {start + step*k : 0 <= k < count} per tensor dimension; their product is an image.
Box = tuple[tuple[int, int, int], ...]
UNION_BUDGET = 1 << 16  # sweep steps before a union of boxes is left to isl


def image_box(program: Program, stmt: Stmt, access: Access, indirect: IndirectMode) -> Box | None:
    """The exact image of `access` over the statement's domain as a product of one arithmetic
    progression per dimension, when the domain is a box (guards bound one variable each) and every
    index dimension is a constant, an indirect term, or c*v + d with a loop variable v that no other
    dimension uses (then the image is the product of the ranges of those dimensions, each a
    progression). None otherwise. An empty domain gives the empty image (a zero count)."""
    if not is_box(stmt.guards, set(stmt.loop_vars)):
        return None
    ranges = clip_ranges({lp.var: (0, program.size(lp.extent) - 1) for lp in stmt.loops}, stmt.guards)
    shape = program.shape(access.tensor)
    if ranges is None or any(lo > hi for lo, hi in ranges.values()):
        return tuple((0, 1, 0) for _ in access.index)
    out: list[tuple[int, int, int]] = []
    used: set[str] = set()
    for d, term in enumerate(access.index):
        if isinstance(term, Indirect):
            n = indirect_values(access.index, bool(stmt.guards)) if indirect == "min" else shape[d]
            out.append((0, 1, n))  # as _access_text writes it
            continue
        if not term.terms:
            out.append((term.const, 1, 1))
            continue
        if len(term.terms) != 1:
            return None
        atom, c = term.terms[0]
        if not isinstance(atom, str) or atom not in ranges or atom in used:
            return None
        used.add(atom)
        lo, hi = ranges[atom]
        first = term.const + c * (lo if c > 0 else hi)
        out.append((first, abs(c), hi - lo + 1))
    return tuple(out)


def union_size(boxes: list[Box]) -> int | None:
    """The number of points in the union of `boxes` (exact), or None when a dimension mixes
    progressions of different steps or phases, or the sweep would exceed UNION_BUDGET steps."""
    live = [b for b in dict.fromkeys(boxes) if all(n > 0 for _, _, n in b)]
    if not live:
        return 0
    if len(live) == 1:
        return math.prod(n for _, _, n in live[0])
    rank = len(live[0])
    intervals: list[list[tuple[int, int]]] = [[] for _ in live]
    for d in range(rank):
        steps = {step for b in live for _, step, n in (b[d],) if n > 1}
        if len(steps) > 1:
            return None
        step = steps.pop() if steps else 1
        phase = {start % step for b in live for start, _, _ in (b[d],)}
        if len(phase) > 1:
            return None
        for k, b in enumerate(live):
            start, _, n = b[d]
            lo = start // step
            intervals[k].append((lo, lo + n))
    budget = [UNION_BUDGET]
    try:
        return _sweep(tuple(dict.fromkeys(tuple(iv) for iv in intervals)), budget, {})
    except _OverBudget:
        return None


class _OverBudget(Exception):
    pass


def _sweep(
    boxes: tuple[tuple[tuple[int, int], ...], ...], budget: list[int], memo: dict
) -> int:
    """Points in a union of half-open integer boxes: dimensions on which every box agrees are
    factored out; the remaining union is swept along the dimension with the fewest cut points."""
    if len(boxes) == 1:
        return math.prod(hi - lo for lo, hi in boxes[0])
    key = frozenset(boxes)
    if key in memo:
        return memo[key]
    rank = len(boxes[0])
    factor, rest = 1, []
    for d in range(rank):
        first = boxes[0][d]
        if all(b[d] == first for b in boxes):
            factor *= first[1] - first[0]
        else:
            rest.append(d)
    if not rest:
        return factor
    reduced = tuple(dict.fromkeys(tuple(b[d] for d in rest) for b in boxes))
    cuts = [sorted({x for b in reduced for x in b[k]}) for k in range(len(rest))]
    k = min(range(len(rest)), key=lambda k: len(cuts[k]))
    total = 0
    for lo, hi in zip(cuts[k], cuts[k][1:]):
        budget[0] -= len(reduced)
        if budget[0] < 0:
            raise _OverBudget
        active = tuple(
            dict.fromkeys(b[:k] + b[k + 1 :] for b in reduced if b[k][0] <= lo and hi <= b[k][1])
        )
        if active:
            total += (hi - lo) * (_sweep(active, budget, memo) if active[0] else 1)
    memo[key] = factor * total
    return memo[key]
