"""Lift the Affine Loop IR to an einsum graph (one node per statement, def-use edges)."""

from solar.lift.einsum import (
    EinsumGraph,
    EinsumNode,
    Operand,
    format_graph,
    format_node,
    lift,
)

__all__ = ["EinsumGraph", "EinsumNode", "Operand", "format_graph", "format_node", "lift"]
