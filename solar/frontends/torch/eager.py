"""The ops eager PyTorch runs for a traced program: the call_function nodes of the exported graph
before decomposition (recorded by the loader), each mapped to the op instance its core-ATen nodes
form (`convert.instance_numbers`), whether its schema makes it a view (no kernel of its own), the
nn.Module calls it ran inside (outermost first; torch.export's `nn_module_stack`: one key per call,
`@N` for the N-th further call of one module) and, for a recurrent net's op, its steps x layers x
directions (the host floor of a cuDNN RNN call grows with them, docs/BOUNDS.md §17) and its argument
class (the tokens of solar.frontends.argclass, read from the nodes' recorded values)."""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch

from solar.frontends.argclass import features
from solar.frontends.torch.convert import SHOWN_AS, instance_numbers

# Nodes torch.export adds that eager never dispatches (shape guards, symbolic sizes), and `alias`,
# which export inserts where an output aliases an input.
_NOT_EAGER = ("_assert", "sym_", "alias.")


# nn.Module calls, outermost first: (the call's key in nn_module_stack, the module's class).
Modules = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class PreCall:
    """One node of the exported graph before decomposition: its fx name, its op and the module
    path of the layer that called it."""

    name: str
    op: str
    view: bool
    modules: Modules = ()
    rnn: tuple[int, int, int] = ()  # a recurrent op's (steps x layers x directions, hidden, batch)
    features: frozenset[str] = frozenset()  # its argument class (solar.frontends.argclass)

    @property
    def module(self) -> str:
        """The path of the innermost module that called it (`layers.3.self_attn.q_proj`; "" at top
        level): its nn_module_stack key, which torch.export writes `L__self__<path>`, `@N` added
        for the N-th further call of one module."""
        return innermost(self.modules)


def innermost(modules: Modules) -> str:
    """The innermost module path of an nn_module_stack (see PreCall.module)."""
    return modules[-1][0].removeprefix("L__self__").split("@")[0] if modules else ""


@dataclass(frozen=True, slots=True)
class EagerCall:
    op: str
    instance: int | None
    view: bool
    modules: Modules = ()
    rnn: tuple[int, int, int] = ()
    features: frozenset[str] = frozenset()


def _rnn(node: torch.fx.Node) -> tuple[int, int, int]:
    """(steps x layers x directions, hidden size, batch) of a recurrent op (solar::lstm / gru /
    rnn_*, with torch._VF.lstm's arguments: input, hx, params, has_biases, num_layers, dropout,
    train, bidirectional, batch_first; hx [layers x directions, batch, hidden]), else ()."""
    if not str(node.target).startswith(("solar.lstm", "solar.gru", "solar.rnn_")):
        return ()
    x, hx, layers, bidirectional, batch_first = (node.args[k] for k in (0, 1, 4, 7, 8))
    state = hx[0] if isinstance(hx, (list, tuple)) else hx
    xv, hv = (getattr(n, "meta", {}).get("val") for n in (x, state))
    if xv is None or hv is None:  # no shapes recorded: the op's own floor applies
        return ()
    steps = xv.shape[1] if batch_first and xv.dim() == 3 else xv.shape[0]
    h = hv.shape
    return int(steps) * int(layers) * (2 if bidirectional else 1), int(h[-1]), int(h[-2]) if len(h) == 3 else 1


def _features(op: str, node: torch.fx.Node) -> frozenset[str]:
    """The argument class of a call (argclass.features) from its arguments' recorded values."""
    def val(a: object) -> object:  # a node's recorded value; a list of nodes (cat's inputs) element-wise
        if isinstance(a, (list, tuple)):
            return [val(x) for x in a]
        return a.meta.get("val") if isinstance(a, torch.fx.Node) else a

    return features(op, [val(a) for a in node.args], {k: val(a) for k, a in node.kwargs.items()})


def _modules(node: torch.fx.Node) -> Modules:
    stack = node.meta.get("nn_module_stack") or {}
    return tuple((str(key), str(value[1])) for key, value in stack.items())


def _is_view(target: object) -> bool:
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.returns:
        return False
    info = schema.returns[0].alias_info
    return info is not None and not info.is_write


def pre_decomposition_calls(graph: torch.fx.Graph) -> tuple[PreCall, ...]:
    """The eager calls of a graph before run_decompositions (getitem and export-only nodes left out)."""
    calls = []
    for node in graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem:
            continue
        op = str(node.target)
        if not isinstance(node.target, torch._ops.OpOverload) or any(k in op for k in _NOT_EAGER):
            continue
        op = SHOWN_AS.get(op, op)
        calls.append(PreCall(node.name, op, _is_view(node.target), _modules(node), _rnn(node), _features(op, node)))
    return tuple(calls)


def eager_calls(traced: object) -> tuple[EagerCall, ...]:
    """The eager calls of a Traced program (empty when the loader recorded none: a training step)."""
    stitched = getattr(traced, "stitched_calls", None)  # a program stitched from a shorter trace
    if stitched is not None:
        return stitched
    pre = getattr(traced, "eager", ())
    if not pre:
        return ()
    numbers = instance_numbers(traced.exported)  # type: ignore[attr-defined]
    return tuple(EagerCall(c.op, numbers.get(c.name), c.view, c.modules, c.rnn, c.features) for c in pre)
