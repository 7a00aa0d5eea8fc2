"""Position structure of values the traced program computes from constants alone: masks built as
data (HF transformers' causal and sliding-window masks: arange, index, comparisons, `&`).

A node is *constant* when it is computed by a deterministic op from constants only (no input,
parameter or buffer, no random or uninitialised op). Where a constant node feeds a non-constant
one, its value is evaluated for real (every tensor on the way at most `REPLAY_LIMIT` elements;
nothing the model's size is allocated) and, when it is a band over its last two dims (a causal or
sliding-window mask: two constants, split by `lo <= j - i <= hi`), the converter lowers it as that
band: its consumers split into guarded pieces, so masked scores cost nothing, as for PyTorch's
`is_causal` SDPA. The values are the program's own, so the structure is exact, not assumed."""

from __future__ import annotations

import operator
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily
from torch.export.graph_signature import InputKind

from solar.frontends.torch.known import REPLAY_LIMIT, as_numpy
from solar.frontends.views import Band, detect_band

aten = torch.ops.aten

# Ops whose values are undefined (empty) or random: never constant.
_UNDEFINED = frozenset(
    {aten.empty, aten.empty_like, aten.empty_strided, aten.new_empty, aten.new_empty_strided,
     aten.empty_permuted}
)


def _is_constant_op(target: Any) -> bool:
    if target is operator.getitem:
        return True
    if not isinstance(target, torch._ops.OpOverload):
        return False
    if target.overloadpacket in _UNDEFINED or torch.Tag.nondeterministic_seeded in target.tags:
        return False
    return not target._schema.is_mutable


def _small(node: torch.fx.Node) -> bool:
    vals = node.meta.get("val")
    leaves = vals if isinstance(vals, (tuple, list)) else (vals,)
    return all(not isinstance(v, torch.Tensor) or _known_small(v.numel()) for v in leaves)


def _known_small(numel: Any) -> bool:
    if isinstance(numel, int):
        return numel <= REPLAY_LIMIT
    from torch.fx.experimental.symbolic_shapes import guard_or_false

    return guard_or_false(numel <= REPLAY_LIMIT)  # a data-dependent size (bincount, nonzero): not known small


def _lifted(ep: torch.export.ExportedProgram) -> dict[str, torch.Tensor]:
    """Placeholders of tensors created in forward (`torch.tensor(5)`), lifted by export as
    constants, whose real values export kept (placeholder name -> value)."""
    out = {}
    for spec in ep.graph_signature.input_specs:
        if spec.kind != InputKind.CONSTANT_TENSOR or not hasattr(spec.arg, "name"):
            continue
        value = ep.constants.get(spec.target)
        if isinstance(value, torch.Tensor) and not isinstance(value, FakeTensor) and not value.is_meta:
            if value.numel() <= REPLAY_LIMIT:
                out[spec.arg.name] = value
    return out


def constant_bands(ep: torch.export.ExportedProgram) -> dict[str, Band]:
    """For each constant node read by a non-constant one and holding a band: that band."""
    graph = ep.graph
    lifted = _lifted(ep)
    constant: set[str] = set(lifted)
    for node in graph.nodes:
        if node.op != "call_function" or not _is_constant_op(node.target) or not _small(node):
            continue
        if all(n.name in constant for n in node.all_input_nodes):
            constant.add(node.name)
    frontier = [
        n for n in graph.nodes
        if n.name in constant
        and isinstance(n.meta.get("val"), torch.Tensor)
        and n.meta["val"].dim() >= 2
        and any(u.name not in constant for u in n.users)
    ]
    if not frontier:
        return {}
    values = _evaluate(graph, constant, {n.name for n in frontier}, lifted)
    out: dict[str, Band] = {}
    for n in frontier:
        v = values.get(n.name)
        if isinstance(v, torch.Tensor) and not v.is_complex() and not v.is_meta:  # meta: no values
            band = detect_band(as_numpy(v), constant_inside=True)
            if band is not None:
                out[n.name] = band
    return out


def _evaluate(
    graph: torch.fx.Graph, constant: set[str], wanted: set[str], lifted: dict[str, torch.Tensor]
) -> dict[str, Any]:
    """The real values of the `wanted` constant nodes (and only what they need); intermediate
    values are dropped once their last constant reader has run."""
    needed: set[str] = set()
    stack = [n for n in graph.nodes if n.name in wanted]
    while stack:
        n = stack.pop()
        if n.name in needed:
            continue
        needed.add(n.name)
        stack += [m for m in n.all_input_nodes if m.name in constant]
    order = [n for n in graph.nodes if n.name in needed and n.name not in lifted]
    readers = {n.name: sum(1 for u in n.users if u.name in needed) for n in order}
    readers |= {name: 1 for name in lifted}  # kept: export's own constants
    env: dict[str, Any] = dict(lifted)
    out: dict[str, Any] = {}
    with unset_fake_temporarily(), torch.no_grad():
        for n in order:
            args = torch.fx.node.map_arg(n.args, lambda m: env[m.name])
            kwargs = torch.fx.node.map_arg(n.kwargs, lambda m: env[m.name])
            try:
                env[n.name] = n.target(*args, **kwargs)
            except Exception:  # a constant this build cannot evaluate: no structure, lowered as is
                return out
            if n.name in wanted:
                out[n.name] = env[n.name]
            for m in n.all_input_nodes:
                readers[m.name] -= 1
                if readers.get(m.name, 1) == 0 and m.name not in wanted:
                    env.pop(m.name, None)
    return out


__all__ = ["constant_bands"]
