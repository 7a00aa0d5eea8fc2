"""Lowering torch.export's training-IR graph without `run_decompositions` when that is safe.

`ExportedProgram.run_decompositions` re-traces the whole graph through fake tensors and
functionalization, even when nearly every node reaches the lowering table as it is (a ResNet's
training IR is conv2d, batch_norm, relu_, add_, ...: 1:1 with its decomposed form). `direct`
rebuilds the decomposed graph node by node instead, and raises Unsupported with the reason (the
caller then runs the full decomposition, which is always correct) unless every call is one of:

  * a functional op the lowering table lowers whole (it is left as it is, as the re-trace leaves it);
  * an in-place op (relu_, add_, ...) on an intermediate that no view shares, or on a buffer or
    input, whose functional twin is such an op and gives the same shape and dtype: it becomes the
    twin, and later readers of the mutated tensor read the twin's result (functionalization's
    rewrite); a mutated buffer or input's final value becomes a mutation output, as the re-trace
    lists it (before the user's outputs, in placeholder order). An in-place op through a view
    the rewrites made the tensor itself (`to` changing nothing) is one on that tensor; views of a
    written input taken after the write are emitted again for their first reader, as
    functionalization regenerates them (Emit.replay);
  * an op of REWRITES: the exact decomposition the re-trace produces for it (conv2d ->
    convolution, linear -> t + addmm, batch_norm -> _native_batch_norm_legit_no_training, ...),
    written out for the argument forms the rule accepts (any other form falls back); the rules of
    the ops attention masks are built from (arange, new_ones, `&`, to(device), diff: HF
    transformers' masking_utils) are in solar.frontends.torch.direct_masks, those of matmul, chunk,
    where/masked_fill, the zero factories, hardswish and the like in solar.frontends.torch.direct_ops.

Inputs are listed in the re-trace's order (`retrace_order`: tensor constants among the buffers).
Each new node keeps the training node's metadata (source line, module stack) and names it as its
origin (`from_node`), as the re-trace does, so the lowered program's op names and instances are
the same. Node names follow fx's naming of the new op (relu_ -> relu); where the re-trace
allocates names for nodes it later drops, the names of later nodes can differ (view vs view_1), and
the re-trace puts an `as_strided` to a tensor's own strides before some views of it (ATen's
as_strided_ after the mean of a channels-last 1x1 pooling is reproduced, in direct_ops): neither
changes a statement."""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable
from typing import Any

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.export.exported_program import _detect_fake_mode_from_gm
from torch.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

from solar.frontends.torch.direct_graph import (
    Emit,
    Unsupported,
    expand,
    is_view,
    mutated,
    reshape,
    value_of,
)
from solar.frontends.torch.direct_masks import MASK_REWRITES
from solar.frontends.torch.direct_ops import OP_REWRITES, linear_by_matmul
from solar.frontends.torch.lowerings.norms import batch_norm as solar_batch_norm
from solar.frontends.torch.lowerings.norms import batch_norm_value

aten = torch.ops.aten


# ---- the rewrites: what the re-trace makes of an op ----------------------------------------------


def _conv(n: int) -> Callable:
    def rule(e: Emit, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        if isinstance(padding, str) or value_of(x).dim() != n + 2:
            raise Unsupported  # "same"/"valid" padding and unbatched inputs decompose differently
        args = (x, w, b, expand(stride, n), expand(padding, n), expand(dilation, n), False, [0] * n, groups)
        return e.call(aten.convolution.default, args)

    return rule


def _linear(e: Emit, x, w, b=None):
    xv = value_of(x)
    if xv.dim() < 2:
        raise Unsupported  # a vector input
    if xv.dim() > 2 and not xv.is_contiguous():
        return linear_by_matmul(e, x, w, b)  # matmul (unfolded) and an out-of-place bias add
    if b is None:
        return _linear_no_bias(e, x, w)
    if xv.dim() == 2:
        return e.call(aten.addmm.default, (b, x, e.call(aten.t.default, (w,))))
    shape = list(xv.shape)
    rows = 1
    for s in shape[:-1]:
        rows *= s
    flat = e.call(aten.view.default, (x, [rows, shape[-1]]))
    out = e.call(aten.addmm.default, (b, flat, e.call(aten.t.default, (w,))))
    return e.call(aten.view.default, (out, shape[:-1] + [int(value_of(w).shape[0])]))


def _linear_no_bias(e: Emit, x, w):
    """matmul(x, w.t()): mm, with a contiguous input folded to two dims and the result unfolded."""
    t = e.call(aten.t.default, (w,))
    shape = list(value_of(x).shape)
    if len(shape) == 2:
        return e.call(aten.mm.default, (x, t))
    rows = 1
    for s in shape[:-1]:
        rows *= s
    out = e.call(aten.mm.default, (e.call(aten.view.default, (x, [rows, shape[-1]])), t))
    return e.call(aten._unsafe_view.default, (out, shape[:-1] + [int(value_of(w).shape[0])]))


def _flatten(e: Emit, x, start=0, end=-1):
    shape = list(value_of(x).shape)
    if not shape:
        raise Unsupported
    start, end = start % len(shape), end % len(shape)
    if start == end:
        return x
    size = 1
    for s in shape[start : end + 1]:
        size *= s
    if not value_of(x).is_contiguous():
        return reshape(e, x, shape[:start] + [size] + shape[end + 1 :])  # a view, or a copy
    return e.call(aten.view.default, (_restrided(e, x), shape[:start] + [size] + shape[end + 1 :]))


def _restrided(e: Emit, x: torch.fx.Node) -> torch.fx.Node:
    """x, or as_strided(x) to its own strides where x is contiguous only through size-1 dims (the
    re-trace flattens such a tensor after that as_strided: a ResNet's pooled channels-last output)."""
    val = x.meta.get("val")
    if not isinstance(val, torch.Tensor) or x.target is not aten.mean.dim or not val.is_contiguous():
        return x  # ATen's as_strided_ follows the mean of a channels-last 1x1 pooling only
    shape, strides = list(val.shape), list(val.stride())
    if strides == _row_major(shape):
        return x
    return e.call(aten.as_strided.default, (x, shape, strides))


def _row_major(shape: list[int]) -> list[int]:
    out, step = [], 1
    for s in reversed(shape):
        out.append(step)
        step *= max(s, 1)
    return out[::-1]


def _layer_norm(e: Emit, x, shape, w=None, b=None, eps=1e-5, cudnn=True):
    return e.items(e.call(aten.native_layer_norm.default, (x, shape, w, b, eps)))[0]


def _batch_norm(e: Emit, x, w, b, mean, var, training, momentum, eps, cudnn=True):
    if mean is None or var is None:
        raise Unsupported
    val = batch_norm_val(e.fake, value_of(x), training)
    if not training:
        node = e.call(aten._native_batch_norm_legit_no_training.default, (x, w, b, mean, var, momentum, eps), val=val)
        return e.items(node)[0]
    node = e.call(aten._native_batch_norm_legit_functional.default, (x, w, b, mean, var, True, momentum, eps), val=val)
    out = e.items(node)
    for k, buf in ((3, mean), (4, var)):  # the updated running statistics
        new, dtype = out[k], value_of(buf).dtype
        if value_of(new).dtype != dtype:  # float32 statistics of a 16-bit input, cast as the re-trace casts them
            new = e.call(aten._to_copy.default, (new,), {"dtype": dtype, "layout": torch.strided})
        mutated(e, buf, new)
    return out[0]


def batch_norm_val(fake: Any, x: torch.Tensor, training: bool) -> tuple | None:
    """lowerings.norms.batch_norm_value in the graph's fake mode (the most costly node of a CNN's
    lowering when the op itself is run)."""
    with unset_fake_temporarily(), fake:
        return batch_norm_value(x, training)


def _functional_batch_norm(e: Emit, x, mean, var, w=None, b=None, training=False, momentum=0.1, eps=1e-5):
    """solar::batch_norm (F.batch_norm's argument order, which the loader routes to it): as aten's."""
    return _batch_norm(e, x, w, b, mean, var, training, momentum, eps)


def _dropout(e: Emit, x, p, train):
    if train and p > 0:
        raise Unsupported  # random
    return e.call(aten.clone.default, (x,))


def _dropout_in_place(e: Emit, x, p, train):
    if train and p > 0:
        raise Unsupported
    return x  # inference: the tensor is left as it is


def _to_dtype(e: Emit, x, dtype, non_blocking=False, copy=False, memory_format=None):
    if copy or memory_format is not None:
        raise Unsupported
    if value_of(x).dtype == dtype:
        return x
    return e.call(aten._to_copy.default, (x,), {"dtype": dtype})


def _max_pool2d(e: Emit, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    if value_of(x).dim() != 4:
        raise Unsupported
    stride = list(stride) if isinstance(stride, (list, tuple)) and stride else stride
    args = (x, expand(kernel, 2), expand(stride or kernel, 2), expand(padding, 2), expand(dilation, 2), ceil_mode)
    return e.items(e.call(aten.max_pool2d_with_indices.default, args))[0]


def _contiguous(e: Emit, x, memory_format=torch.contiguous_format):
    if memory_format != torch.contiguous_format:
        raise Unsupported
    if value_of(x).is_contiguous():
        return x
    return e.call(aten.clone.default, (x,), {"memory_format": torch.contiguous_format})


def _softmax(op: Any) -> Callable:
    def rule(e: Emit, x, dim, dtype=None):
        if dtype is not None:
            raise Unsupported
        return e.call(op, (x, dim, False))

    return rule


REWRITES: dict[Any, Callable] = {
    aten.reshape.default: reshape,
    aten.contiguous.default: _contiguous,
    aten.softmax.int: _softmax(aten._softmax.default),
    aten.log_softmax.int: _softmax(aten._log_softmax.default),
    aten.max_pool2d.default: _max_pool2d,
    aten.conv1d.default: _conv(1),
    aten.conv2d.default: _conv(2),
    aten.conv3d.default: _conv(3),
    aten.linear.default: _linear,
    aten.flatten.using_ints: _flatten,
    aten.layer_norm.default: _layer_norm,
    aten.batch_norm.default: _batch_norm,
    solar_batch_norm._opoverload: _functional_batch_norm,
    aten.dropout.default: _dropout,
    aten.dropout_.default: _dropout_in_place,
    aten.to.dtype: _to_dtype,
    **MASK_REWRITES,
    **OP_REWRITES,
}


# ---- in-place ops --------------------------------------------------------------------------------


# In-place ops functionalization does not turn into their twin: mutations of a tensor's autograd
# state rather than its data, and copy_ (whose new value is the source itself, no copy node).
NOT_TWINNED = frozenset({aten.detach_.default, aten.requires_grad_.default, aten.copy_.default})


def functional_twin(op: Any) -> Any:
    """The functional op of an in-place one (aten.relu_.default -> aten.relu.default), or None."""
    name = op._schema.name.split("::")[-1]
    if not name.endswith("_") or name.endswith("__"):
        return None
    packet = getattr(aten, name[:-1], None)
    return getattr(packet, op._overloadname, None) if packet is not None else None


def _in_place(e: Emit, node: torch.fx.Node, keep: frozenset) -> Any:
    if torch.Tag.inplace_view in node.target.tags or node.target in NOT_TWINNED:
        raise Unsupported  # a mutation of the tensor's shape or autograd state; copy_
    twin = functional_twin(node.target)
    if twin is None or twin not in keep or not node.args:
        raise Unsupported
    chain = _aliases(e, node.args[0])
    self = chain[-1]
    if not isinstance(self, torch.fx.Node) or self.op not in ("placeholder", "call_function") or is_view(self):
        raise Unsupported
    if any(is_view(u) and u not in chain for link in chain for u in link.users):
        raise Unsupported  # a view shares the mutated storage
    args = torch.fx.node.map_arg(node.args, lambda n: e.env[n])
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: e.env[n])
    new = e.call(twin, args, kwargs)
    val, old = new.meta["val"], node.meta["val"]
    if val.shape != old.shape or val.dtype != old.dtype:
        raise Unsupported  # type promotion: functionalization casts back
    mutated(e, e.env[self], new)
    return new


def _aliases(e: Emit, x: Any) -> list:
    """x, and the tensor x is, for as long as x is a view that the rewrites made the tensor itself
    (`to` changing nothing): an in-place op on x is one on that tensor, as functionalization sees it."""
    chain = [x]
    while (
        isinstance(x, torch.fx.Node) and x.op == "call_function" and is_view(x) and x.args
        and isinstance(x.args[0], torch.fx.Node) and e.env.get(x) is e.env.get(x.args[0])
    ):
        x = x.args[0]
        chain.append(x)
    return chain


# ---- the whole graph -----------------------------------------------------------------------------


def _functional(op: Any) -> bool:
    schema = getattr(op, "_schema", None)
    return schema is not None and not schema.is_mutable


def values_mode(ep: torch.export.ExportedProgram) -> Any:
    """The mode new values are computed in: the fake mode of the graph's values, as the re-trace
    picks it; none for values on the meta device (solar.frontends.torch.meta_trace)."""
    with unset_fake_temporarily():
        fake = _detect_fake_mode_from_gm(ep.graph_module)
    if fake is not None:
        return fake
    values = [n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"]
    if values and all(isinstance(v, torch.Tensor) and v.is_meta for v in values):
        return contextlib.nullcontext()
    raise Unsupported("no fake mode in the graph's values")


def direct(ep: torch.export.ExportedProgram, keep: frozenset) -> torch.export.ExportedProgram:
    """The decomposed form of a training-IR program built node by node (see the module
    docstring); raises Unsupported, saying why, where the program needs the full re-trace.
    `keep`: the ops lowered whole."""
    if ep.graph_signature.backward_signature is not None:
        raise Unsupported("a graph with a backward")
    _check_ops(ep, keep)
    graph = torch.fx.Graph()
    specs = retrace_order(ep.graph_signature.input_specs)
    named = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    if sorted(getattr(s.arg, "name", "") for s in specs) != sorted(named):
        raise Unsupported("inputs that are not one placeholder each")
    holders = [named[s.arg.name] for s in specs]
    fake = values_mode(ep)
    e = Emit(graph, fake, {}, {}, keep)
    for node in holders:
        new = graph.placeholder(node.name)
        if new.name != node.name:  # a name fx reserves (`input`): the signature names the original
            raise Unsupported(f"input name {node.name!r} is reserved by torch.fx")
        new.meta.update(node.meta)
        e.bind(node, new)
    outputs: list[Any] = []
    for node in ep.graph.nodes:
        e.origin = node
        if node.op == "placeholder":
            continue
        elif node.op == "call_function":
            try:
                e.bind(node, _node(e, node, keep))
            except Unsupported:
                raise Unsupported(f"no exact rewrite of {node.target} at node {node.name}") from None
        elif node.op == "output":
            outputs = list(node.args[0])
        else:  # get_attr, call_module: not in an exported training IR here
            raise Unsupported(f"a {node.op} node ({node.name})")
    return _program(ep, e, holders, specs, outputs)


# Inputs that the re-trace lists as the buffers of the module it re-traces.
STATE_KINDS = frozenset({InputKind.BUFFER, InputKind.CONSTANT_TENSOR})


def retrace_order(specs: list[InputSpec]) -> list[InputSpec]:
    """The input specs in the re-trace's order: the re-trace registers tensor constants as buffers
    of the module they belong to (after its own) and lists buffers module by module, a module's own
    before its submodules' (a root-level constant before a submodule's buffer); every other input
    keeps its place."""
    slots = [k for k, s in enumerate(specs) if s.kind in STATE_KINDS]
    state = _tree_order([(specs[k].target.split("."), specs[k]) for k in slots])
    out = list(specs)
    for k, spec in zip(slots, state):
        out[k] = spec
    return out


def _tree_order(items: list[tuple[list[str], Any]]) -> list:
    """Items by dotted path, each module's own (one atom left) first, then each submodule's in the
    order of its first item; within a module, in the order given."""
    own = [v for atoms, v in items if len(atoms) == 1]
    groups: dict[str, list] = {}
    for atoms, v in items:
        if len(atoms) > 1:
            groups.setdefault(atoms[0], []).append((atoms[1:], v))
    return own + [v for group in groups.values() for v in _tree_order(group)]


def _check_ops(ep: torch.export.ExportedProgram, keep: frozenset) -> None:
    """Raises Unsupported unless every call's op is one the direct path may handle (a cheap look
    before building)."""
    for node in ep.graph.nodes:
        t = node.target
        if node.op != "call_function" or t is operator.getitem or t in keep or t in REWRITES:
            continue
        if not isinstance(t, torch._ops.OpOverload) or _functional(t) or functional_twin(t) not in keep:
            raise Unsupported(f"no rewrite of {t} (node {node.name})")


def _node(e: Emit, node: torch.fx.Node, keep: frozenset) -> Any:
    target = node.target
    args = torch.fx.node.map_arg(node.args, lambda n: e.env[n])
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: e.env[n])
    if target is not operator.getitem and not isinstance(target, torch._ops.OpOverload):
        raise Unsupported  # a higher-order op, or arithmetic on sizes
    if target is operator.getitem:
        src = e.env[node.args[0]]
        return src[args[1]] if isinstance(src, (list, tuple)) else e.call(operator.getitem, args)
    rule = REWRITES.get(target)
    if rule is not None:
        before = len(e.graph.nodes)
        try:
            value = rule(e, *args, **kwargs)
        except TypeError:
            raise Unsupported from None  # an argument form the rule does not know
        traced = node.meta.get("val")
        if isinstance(value, torch.fx.Node) and len(e.graph.nodes) > before and isinstance(traced, torch.Tensor):
            got = value.meta["val"]
            if isinstance(got, torch.Tensor) and (got.shape, got.dtype) == (traced.shape, traced.dtype):
                value.meta["val"] = traced  # the op's own value (its strides), as the re-trace has it
        return value
    if not _functional(target):
        return _in_place(e, node, keep)
    if target not in keep:
        raise Unsupported
    same = all(
        isinstance(e.env[a], torch.fx.Node) and e.env[a].meta.get("val") is a.meta.get("val")
        for a in node.all_input_nodes
    )
    new = e.call(target, args, kwargs, node.meta.get("val") if same else None)  # same inputs: same value
    if isinstance(new.meta["val"], (tuple, list)):  # the re-trace names every output's getitem
        return tuple(e.items(new))
    return new


def _program(
    ep: torch.export.ExportedProgram, e: Emit, holders: list[torch.fx.Node], inputs: list[InputSpec],
    outputs: list[Any],
) -> torch.export.ExportedProgram:
    sig = ep.graph_signature
    specs = {s.arg.name: s for s in inputs if hasattr(s.arg, "name")}
    mutation_kind = {InputKind.BUFFER: OutputKind.BUFFER_MUTATION, InputKind.USER_INPUT: OutputKind.USER_INPUT_MUTATION}
    out_nodes: list[Any] = []
    out_specs: list[OutputSpec] = []
    for holder in holders:  # mutated buffers and inputs first, in placeholder order
        if holder not in e.current:
            continue
        spec = specs[holder.name]
        kind = mutation_kind.get(spec.kind)
        if kind is None:
            raise Unsupported(f"a mutated {spec.kind.name.lower()} ({holder.name})")
        value = e.current[holder]
        target = spec.target if kind is OutputKind.BUFFER_MUTATION else holder.name
        out_nodes.append(value)
        out_specs.append(OutputSpec(kind, TensorArgument(value.name), target))
    for arg, spec in zip(outputs, sig.output_specs):
        value = e.env[arg] if isinstance(arg, torch.fx.Node) else arg
        if isinstance(value, torch.fx.Node) and value in e.replays:
            raise Unsupported(f"output {arg} is a view of an input written in place")
        if isinstance(arg, torch.fx.Node) != isinstance(value, torch.fx.Node):
            raise Unsupported(f"output {arg} became a constant")
        if spec.kind is not OutputKind.USER_OUTPUT:
            raise Unsupported(f"a {spec.kind.name} output")
        if isinstance(value, torch.fx.Node):
            spec = OutputSpec(spec.kind, TensorArgument(value.name), spec.target)
        out_nodes.append(value)
        out_specs.append(spec)
    e.graph.output(tuple(out_nodes))
    e.graph.eliminate_dead_code()
    gm = torch.fx.GraphModule(ep.graph_module, e.graph)
    new_sig = ExportGraphSignature(input_specs=list(inputs), output_specs=out_specs)
    return torch.export.ExportedProgram(
        root=gm,
        graph=gm.graph,
        graph_signature=new_sig,
        state_dict=ep.state_dict,
        range_constraints=ep.range_constraints,
        module_call_graph=[],
        example_inputs=ep.example_inputs,
        constants=ep.constants,
    )
