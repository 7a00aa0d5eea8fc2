"""An access as a product of independent parts. When the loop variables of a statement fall into
groups that no index term and no guard mixes, its domain is the product of the groups' domains and
the access maps each group onto its own tensor dimensions, so the image is the product of the
groups' images and its size the product of their sizes: exact, with no approximation. A padded
convolution's input read `x[n, c, h + r - 1, w + s - 1]` splits into `n`, `c`, `(h, r)` and
`(w, s)`; counting those parts instead of the whole map lets layers that differ only in channel
count share every count (DenseNet: one isl call per spatial size instead of one per layer)."""

from __future__ import annotations

import dataclasses

from solar.ir.affine import Affine
from solar.ir.nodes import IndexTerm, Stmt

__all__ = ["Part", "independent_parts"]


@dataclasses.dataclass(frozen=True, slots=True)
class Part:
    """The loops and guards of one group (as a statement) and the tensor dimensions it indexes."""

    stmt: Stmt
    dims: tuple[int, ...]


def independent_parts(stmt: Stmt, index: tuple[IndexTerm, ...]) -> tuple[Part, ...] | None:
    """The parts of an affine access over the statement's domain, in loop order; None when there
    is only one (or the access is not of the form handled: an indirect term, a guard without
    variables, a variable that is not a loop variable)."""
    loop_vars = stmt.loop_vars
    group = {v: v for v in loop_vars}

    def root(v: str) -> str:
        while group[v] != v:
            group[v] = group[group[v]]
            v = group[v]
        return v

    links = []
    for term in index:
        if not isinstance(term, Affine):
            return None
        links.append(term.variables)
    for g in stmt.guards:
        if not g.variables:
            return None
        links.append(g.variables)
    for names in links:
        if not names <= group.keys():
            return None
        first, *rest = sorted(names) or [None]
        for v in rest:
            group[root(v)] = root(first)
    roots = list(dict.fromkeys(root(v) for v in loop_vars))
    if len(roots) < 2:
        return None
    dims: dict[str, list[int]] = {r: [] for r in roots}
    constant: list[int] = []
    for d, term in enumerate(index):
        names = term.variables
        (dims[root(next(iter(names)))] if names else constant).append(d)
    parts = []
    for r in roots:
        loops = tuple(lp for lp in stmt.loops if root(lp.var) == r)
        guards = tuple(g for g in stmt.guards if root(next(iter(g.variables))) == r)
        parts.append(Part(dataclasses.replace(stmt, loops=loops, guards=guards), tuple(dims[r])))
    if constant:  # dimensions indexed by constants: one element each, with the first part
        parts[0] = Part(parts[0].stmt, tuple(sorted(parts[0].dims + tuple(constant))))
    return tuple(parts)
