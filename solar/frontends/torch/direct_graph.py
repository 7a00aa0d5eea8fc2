"""Building the direct path's graph (solar.frontends.torch.direct): `Emit`, which adds nodes to the
new graph with the training node's metadata, the `Unsupported` refusal, and what the rewrite rules
of direct, direct_ops and direct_masks share (a node's value, int-or-list arguments, ATen's
reshape, the bookkeeping of in-place updates)."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.fx.traceback import NodeSource, NodeSourceAction

aten = torch.ops.aten


class Unsupported(Exception):
    """The direct path does not handle this node or graph (the message, where given, says why):
    decompose the whole graph by the re-trace instead."""


def expand(x: Any, n: int) -> list[int]:
    """An int-or-list argument (stride, padding, kernel) as n ints, as ATen's overloads take it."""
    x = list(x) if isinstance(x, (list, tuple)) else [x]
    return x * n if len(x) == 1 else x


def value_of(x: Any) -> Any:
    """The (fake) value of a graph node as traced; a constant argument as it is."""
    return x.meta["val"] if isinstance(x, torch.fx.Node) else x


@dataclass
class Emit:
    """Building the new graph: `env` maps each training-IR node to its value there (a new node or
    a constant), `current` a mutated placeholder to the node holding its latest value."""

    graph: torch.fx.Graph
    fake: Any
    env: dict[torch.fx.Node, Any]
    current: dict[torch.fx.Node, torch.fx.Node]
    keep: frozenset
    origin: torch.fx.Node | None = None
    mutated: set = field(default_factory=set)  # values written in place (new-graph nodes)
    inputs_written: set = field(default_factory=set)  # those of them that are an input's or buffer's
    replays: dict = field(default_factory=dict)  # a view of such a value -> (the value, its view ops)
    synced: dict = field(default_factory=dict)  # such a view -> its ops emitted again, once
    readers: dict = field(default_factory=dict)  # new-graph node -> the training nodes bound to it

    def bind(self, old: torch.fx.Node, value: Any) -> None:
        self.env[old] = value
        if isinstance(value, torch.fx.Node):
            self.readers.setdefault(value, []).append(old)

    def call(self, target: Any, args: tuple, kwargs: dict | None = None, val: Any = None) -> torch.fx.Node:
        """A new node for target(*args, **kwargs) (args already in the new graph), with the value
        fake-computed (or `val`, the value the same call had in the training IR) and the origin's
        metadata."""
        kwargs = kwargs or {}
        if target is not operator.getitem and target not in self.keep:
            raise Unsupported  # the re-trace would decompose it further
        nodes = [a for a in args if isinstance(a, torch.fx.Node)]
        viewed = [a for a in nodes if a in self.mutated or a in self.replays]
        chain = None
        if viewed and returns_view(target):
            if viewed != [args[0]] or args[0] not in self.inputs_written | set(self.replays):
                raise Unsupported  # a view of a written intermediate: functionalization renames it
            base, ops = self.replays.get(args[0], (args[0], ()))
            if ops:
                self.replay(args[0])  # functionalization brings the viewed tensor up to date first
            chain = (base, (*ops, (target, args[1:], kwargs)))
        elif viewed:
            args = tuple(self.replay(a) if a in viewed and a in self.replays else a for a in args)
        inner = ([a for a in args if not isinstance(a, torch.fx.Node)], kwargs)
        if self.replays and not self.replays.keys().isdisjoint(_nodes_in(inner)):
            raise Unsupported  # a view of a written input inside a list or keyword argument
        node = self.create(target, args, kwargs, val)
        if chain is not None:
            self.replays[node] = chain
        return node

    def replay(self, view: torch.fx.Node) -> torch.fx.Node:
        """The view ops of a view of an input written in place, emitted again from the written value
        for its first reader, as functionalization regenerates them (new names, the reader as
        origin); later readers read the same nodes."""
        if view not in self.synced:
            x, ops = self.replays[view]
            for target, rest, kwargs in ops:
                x = self.create(target, (x, *rest), kwargs)
            self.synced[view] = x
        return self.synced[view]

    def create(self, target: Any, args: tuple, kwargs: dict, val: Any = None) -> torch.fx.Node:
        """The node itself (see `call`)."""
        name = target.__name__.split(".")[0] if isinstance(target, torch._ops.OpOverload) else None
        node = self.graph.create_node("call_function", target, *normalised(target, args, kwargs), name)
        if val is not None:
            node.meta["val"] = val
        else:
            vals = torch.fx.node.map_arg((args, kwargs), lambda n: n.meta["val"])
            with unset_fake_temporarily(), self.fake:  # the graph's own mode, not the caller's
                node.meta["val"] = target(*vals[0], **vals[1])
        origin = self.origin
        if origin is not None:
            for key in ("stack_trace", "nn_module_stack", "source_fn_stack", "torch_fn"):
                if key in origin.meta:
                    node.meta[key] = origin.meta[key]
            node.meta["from_node"] = [NodeSource(origin, "solar.direct", NodeSourceAction.CREATE)]
        return node

    def items(self, node: torch.fx.Node) -> list[torch.fx.Node]:
        """getitem nodes of every output of a multi-output node (the unused ones are dropped)."""
        return [self.call(operator.getitem, (node, k)) for k in range(len(node.meta["val"]))]


def _nodes_in(x: Any) -> list[torch.fx.Node]:
    found: list[torch.fx.Node] = []
    torch.fx.node.map_arg(x, lambda n: found.append(n) or n)
    return found


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return list(default) == list(value)
    if default is None or value is None:
        return default is value
    return default is not _NONE and type(default) is type(value) and default == value


def normalised(target: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """args and kwargs as a trace records them: positional arguments given by position, trailing
    ones equal to the schema's defaults left out, keyword-only ones only where not the default."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return args, kwargs
    positional = [a for a in schema.arguments if not a.kwarg_only]
    kwargs = dict(kwargs)
    full = list(args)
    for a in positional[len(args):]:
        if a.name in kwargs:
            full.append(kwargs.pop(a.name))
        else:
            full.append(a.default_value if a.has_default_value() else _NONE)
    while full and positional:
        a = positional[len(full) - 1]
        if full[-1] is not _NONE and not _same(full[-1], a.default_value if a.has_default_value() else _NONE):
            break
        full.pop()
    if any(v is _NONE for v in full):
        raise Unsupported  # an argument left out that has no default
    only = {a.name: a for a in schema.arguments if a.kwarg_only}
    kept = {
        k: v for k, v in kwargs.items()
        if k not in only or not only[k].has_default_value() or not _same(v, only[k].default_value)
    }
    return tuple(full), kept


_NONE = object()


def reshape(e: Emit, x, shape):
    """ATen's reshape: a view to the shape as given where x is contiguous, else a view to the
    shape with its -1 resolved where the strides allow one, else a contiguous clone and an
    _unsafe_view of it (a GQA's expanded keys)."""
    xv = value_of(x)
    if xv.is_contiguous():
        return e.call(aten.view.default, (x, shape))
    known = 1
    for s in shape:
        known *= s if s != -1 else 1
    shape = [xv.numel() // known if s == -1 else s for s in shape]
    try:
        with unset_fake_temporarily(), e.fake:
            xv.view(shape)
    except (RuntimeError, ValueError):
        copy = e.call(aten.clone.default, (x,), {"memory_format": torch.contiguous_format})
        return e.call(aten._unsafe_view.default, (copy, shape))
    return e.call(aten.view.default, (x, shape))


def is_view(node: torch.fx.Node) -> bool:
    """Whether the node's value shares another node's storage (a view op, or an item of one)."""
    if node.target is operator.getitem:
        return is_view(node.args[0])  # type: ignore[arg-type]
    return returns_view(node.target)


def returns_view(op: Any) -> bool:
    """Whether op's result shares its argument's storage without writing it (view, t, expand...)."""
    schema = getattr(op, "_schema", None)
    info = schema.returns[0].alias_info if schema is not None and schema.returns else None
    return info is not None and not info.is_write


def mutated(e: Emit, target: Any, value: torch.fx.Node) -> None:
    """`target` (a new-graph node) now holds `value`: later readers read `value`."""
    e.mutated.add(value)
    for old in e.readers.pop(target, []):
        e.bind(old, value)
        if old.op == "placeholder":
            e.current[old] = value
            e.inputs_written.add(value)
