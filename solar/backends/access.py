"""Plain accesses and the def-use queries the cache-aware bounds share.

A *plain* access of a statement with a box domain (no guards) indexes every dimension of its tensor
either by one loop variable (coefficient 1, no offset) whose extent equals the dimension's size, or
by the constant 0 on a dimension of size 1, with no variable used twice. Such an access is a
bijection between the values of its variables and ALL elements of the tensor, which makes the
element-level facts the cache-aware bounds need (which elements a reduction folds together, which
element a consumer reads) exact without enumerating points: a set of elements is a product of
variable ranges."""

from __future__ import annotations

import math
from dataclasses import dataclass

from solar.ir.nodes import Indirect, Load
from solar.ir.scalar_ops import Update
from solar.lift.einsum import EinsumGraph, EinsumNode, Operand

@dataclass(frozen=True, slots=True)
class Plain:
    """A plain access: the loop variable indexing each dimension (None: a size-1 dimension read or
    written at 0)."""

    tensor: str
    dims: tuple[str | None, ...]

    @property
    def vars(self) -> frozenset[str]:
        return frozenset(v for v in self.dims if v is not None)

    def dim_of(self, var: str) -> int | None:
        return self.dims.index(var) if var in self.dims else None


def is_box(node: EinsumNode) -> bool:
    """The iteration domain is the full product of the loop ranges (no guards)."""
    return not node.guards


def plain(graph: EinsumGraph, node: EinsumNode, tensor: str, index: tuple) -> Plain | None:
    """The plain form of an access of `node` (an operand's or the output's index), or None."""
    shape = graph.shape(tensor)
    if len(index) != len(shape) or not is_box(node):
        return None
    extents = dict(node.extents)
    dims: list[str | None] = []
    for size, term in zip(shape, index):
        if isinstance(term, Indirect):
            return None
        if term.is_plain_var:
            v = term.terms[0][0]
            if extents.get(v) != size or v in dims:
                return None
            dims.append(v)
        elif term.is_const and term.const == 0 and size == 1:
            dims.append(None)
        else:
            return None
    return Plain(tensor, tuple(dims))


def plain_load(graph: EinsumGraph, node: EinsumNode, load: Load | Operand) -> Plain | None:
    return plain(graph, node, load.tensor, load.index)


def plain_store(graph: EinsumGraph, node: EinsumNode) -> Plain | None:
    return plain(graph, node, node.output, node.output_index)


def extent_product(node: EinsumNode, variables: frozenset[str]) -> int:
    extents = dict(node.extents)
    return math.prod(extents[v] for v in variables)


def folds_every_point(node: EinsumNode) -> bool:
    """Every point's value reaches the target's final value: an accumulating update folds all of
    them in; a plain assignment must write each point to its own element (no reduced variable),
    or later points would overwrite earlier ones."""
    return node.reduce is not Update.ASSIGN or not node.reduced_vars
