"""The ops eager PyTorch runs for a traced program: the call_function nodes of the exported graph
before decomposition (recorded by the loader), each mapped to the op instance its core-ATen nodes
form (`convert.instance_numbers`), and whether its schema makes it a view (no kernel of its own)."""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch

# Nodes torch.export adds that eager never dispatches (shape guards, symbolic sizes), and `alias`,
# which export inserts where an output aliases an input.
_NOT_EAGER = ("_assert", "sym_", "alias.")


@dataclass(frozen=True, slots=True)
class PreCall:
    """One node of the exported graph before decomposition: its fx name, its op and the module
    path of the layer that called it."""

    name: str
    op: str
    view: bool
    module: str = ""


@dataclass(frozen=True, slots=True)
class EagerCall:
    op: str
    instance: int | None
    view: bool


def _is_view(target: object) -> bool:
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.returns:
        return False
    info = schema.returns[0].alias_info
    return info is not None and not info.is_write


def pre_decomposition_calls(graph: torch.fx.Graph) -> tuple[PreCall, ...]:
    """The eager calls of a graph before run_decompositions (getitem and export-only nodes left out)."""
    from solar.frontends.torch.convert import module_path

    calls = []
    for node in graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        op = str(node.target)
        if not isinstance(node.target, torch._ops.OpOverload) or any(k in op for k in _NOT_EAGER):
            continue
        calls.append(PreCall(node.name, op, _is_view(node.target), module_path(node)))
    return tuple(calls)


def eager_calls(traced: object) -> tuple[EagerCall, ...]:
    """The eager calls of a Traced program (empty when the loader recorded none: a training step)."""
    from solar.frontends.torch.convert import instance_numbers

    stitched = getattr(traced, "stitched_calls", None)  # a program stitched from a shorter trace
    if stitched is not None:
        return stitched
    pre = getattr(traced, "eager", ())
    if not pre:
        return ()
    numbers = instance_numbers(traced.exported)  # type: ignore[attr-defined]
    return tuple(EagerCall(c.op, numbers.get(c.name), c.view) for c in pre)
