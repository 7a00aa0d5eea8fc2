"""Lowering torch.export's training-IR graph without `run_decompositions` when that is safe.

`ExportedProgram.run_decompositions` re-traces the whole graph through fake tensors and
functionalization, even when nearly every node reaches the lowering table as it is (a ResNet's
training IR is conv2d, batch_norm, relu_, add_, ...: 1:1 with its decomposed form). `direct`
rebuilds the decomposed graph node by node instead, and returns None (the caller then runs the
full decomposition, which is always correct) unless every call is one of:

  * a functional op the lowering table lowers whole (it is left as it is, as the re-trace leaves it);
  * an in-place op (relu_, add_, ...) on an intermediate that no view shares, or on a buffer or
    input, whose functional twin is such an op and gives the same shape and dtype: it becomes the
    twin, and later readers of the mutated tensor read the twin's result (functionalization's
    rewrite); a mutated buffer or input's final value becomes a mutation output, as the re-trace
    lists it (before the user's outputs, in placeholder order);
  * an op of REWRITES: the exact decomposition the re-trace produces for it (conv2d ->
    convolution, linear -> t + addmm, batch_norm -> _native_batch_norm_legit_no_training, ...),
    written out for the argument forms the rule accepts (any other form falls back); the rules of
    the ops attention masks are built from (arange, new_ones, `&`, to(device), diff: HF
    transformers' masking_utils) are in solar.frontends.torch.direct_masks, those of matmul, chunk,
    where/masked_fill, the zero factories, hardswish and the like in solar.frontends.torch.direct_ops.

Each new node keeps the training node's metadata (source line, module stack) and names it as its
origin (`from_node`), as the re-trace does, so the lowered program's op names and instances are
the same. Node names follow fx's naming of the new op (relu_ -> relu); where the re-trace
allocates names for nodes it later drops, the names of later nodes can differ (view vs view_1), and
the re-trace puts an `as_strided` to a tensor's own strides before some views of it (ATen's
as_strided_ after the mean of a channels-last 1x1 pooling is reproduced, in direct_ops): neither
changes a statement."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.export.exported_program import _detect_fake_mode_from_gm
from torch.fx.traceback import NodeSource, NodeSourceAction

from solar.frontends.torch.direct_masks import MASK_REWRITES, Unsupported, _expand, _val
from solar.frontends.torch.direct_ops import OP_REWRITES, linear_by_matmul
from solar.frontends.torch.lowerings.norms import batch_norm as solar_batch_norm
from solar.frontends.torch.lowerings.norms import batch_norm_value

aten = torch.ops.aten


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
        if _returns_view(target) and any(a in self.mutated for a in args if isinstance(a, torch.fx.Node)):
            raise Unsupported  # functionalization regenerates views of a mutated tensor (other names, order)
        name = target.__name__.split(".")[0] if isinstance(target, torch._ops.OpOverload) else None
        node = self.graph.create_node("call_function", target, *_normalised(target, args, kwargs), name)
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


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return list(default) == list(value)
    if default is None or value is None:
        return default is value
    return default is not _NONE and type(default) is type(value) and default == value


def _normalised(target: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
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


# ---- the rewrites: what the re-trace makes of an op ----------------------------------------------


def _conv(n: int) -> Callable:
    def rule(e: Emit, x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
        if isinstance(padding, str) or _val(x).dim() != n + 2:
            raise Unsupported  # "same"/"valid" padding and unbatched inputs decompose differently
        args = (x, w, b, _expand(stride, n), _expand(padding, n), _expand(dilation, n), False, [0] * n, groups)
        return e.call(aten.convolution.default, args)

    return rule


def _linear(e: Emit, x, w, b=None):
    xv = _val(x)
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
    return e.call(aten.view.default, (out, shape[:-1] + [int(_val(w).shape[0])]))


def _linear_no_bias(e: Emit, x, w):
    """matmul(x, w.t()): mm, with a contiguous input folded to two dims and the result unfolded."""
    t = e.call(aten.t.default, (w,))
    shape = list(_val(x).shape)
    if len(shape) == 2:
        return e.call(aten.mm.default, (x, t))
    rows = 1
    for s in shape[:-1]:
        rows *= s
    out = e.call(aten.mm.default, (e.call(aten.view.default, (x, [rows, shape[-1]])), t))
    return e.call(aten._unsafe_view.default, (out, shape[:-1] + [int(_val(w).shape[0])]))


def _flatten(e: Emit, x, start=0, end=-1):
    shape = list(_val(x).shape)
    if not shape:
        raise Unsupported
    start, end = start % len(shape), end % len(shape)
    if start == end:
        return x
    size = 1
    for s in shape[start : end + 1]:
        size *= s
    if not _val(x).is_contiguous():
        return _reshape(e, x, shape[:start] + [size] + shape[end + 1 :])  # a view, or a copy
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
    val = batch_norm_val(e.fake, _val(x), training)
    if not training:
        node = e.call(aten._native_batch_norm_legit_no_training.default, (x, w, b, mean, var, momentum, eps), val=val)
        return e.items(node)[0]
    node = e.call(aten._native_batch_norm_legit_functional.default, (x, w, b, mean, var, True, momentum, eps), val=val)
    out = e.items(node)
    for k, buf in ((3, mean), (4, var)):  # the updated running statistics
        new, dtype = out[k], _val(buf).dtype
        if _val(new).dtype != dtype:  # float32 statistics of a 16-bit input, cast as the re-trace casts them
            new = e.call(aten._to_copy.default, (new,), {"dtype": dtype, "layout": torch.strided})
        _mutated(e, buf, new)
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
    if _val(x).dtype == dtype:
        return x
    return e.call(aten._to_copy.default, (x,), {"dtype": dtype})


def _max_pool2d(e: Emit, x, kernel, stride=(), padding=0, dilation=1, ceil_mode=False):
    if _val(x).dim() != 4:
        raise Unsupported
    stride = list(stride) if isinstance(stride, (list, tuple)) and stride else stride
    args = (x, _expand(kernel, 2), _expand(stride or kernel, 2), _expand(padding, 2), _expand(dilation, 2), ceil_mode)
    return e.items(e.call(aten.max_pool2d_with_indices.default, args))[0]


def _contiguous(e: Emit, x, memory_format=torch.contiguous_format):
    if memory_format != torch.contiguous_format:
        raise Unsupported
    if _val(x).is_contiguous():
        return x
    return e.call(aten.clone.default, (x,), {"memory_format": torch.contiguous_format})


def _softmax(op: Any) -> Callable:
    def rule(e: Emit, x, dim, dtype=None):
        if dtype is not None:
            raise Unsupported
        return e.call(op, (x, dim, False))

    return rule


def _reshape(e: Emit, x, shape):
    """ATen's reshape: a view to the shape as given where x is contiguous, else a view to the
    shape with its -1 resolved where the strides allow one, else a contiguous clone and an
    _unsafe_view of it (a GQA's expanded keys)."""
    xv = _val(x)
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


REWRITES: dict[Any, Callable] = {
    aten.reshape.default: _reshape,
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


def _twin(op: Any) -> Any:
    """The functional op of an in-place one (aten.relu_.default -> aten.relu.default), or None."""
    name = op._schema.name.split("::")[-1]
    if not name.endswith("_") or name.endswith("__"):
        return None
    packet = getattr(aten, name[:-1], None)
    return getattr(packet, op._overloadname, None) if packet is not None else None


def _is_view(node: torch.fx.Node) -> bool:
    if node.target is operator.getitem:
        return _is_view(node.args[0])  # type: ignore[arg-type]
    return _returns_view(node.target)


def _returns_view(op: Any) -> bool:
    """Whether op's result shares its argument's storage without writing it (view, t, expand...)."""
    schema = getattr(op, "_schema", None)
    info = schema.returns[0].alias_info if schema is not None and schema.returns else None
    return info is not None and not info.is_write


def _mutated(e: Emit, target: Any, value: torch.fx.Node) -> None:
    """`target` (a new-graph node) now holds `value`: later readers read `value`."""
    e.mutated.add(value)
    for old in e.readers.pop(target, []):
        e.bind(old, value)
        if old.op == "placeholder":
            e.current[old] = value


def _in_place(e: Emit, node: torch.fx.Node, keep: frozenset) -> Any:
    if torch.Tag.inplace_view in node.target.tags or node.target in NOT_TWINNED:
        raise Unsupported  # a mutation of the tensor's shape or autograd state; copy_
    twin = _twin(node.target)
    if twin is None or twin not in keep or not node.args:
        raise Unsupported
    self = node.args[0]
    if not isinstance(self, torch.fx.Node) or self.op not in ("placeholder", "call_function") or _is_view(self):
        raise Unsupported
    if any(_is_view(u) for u in self.users):
        raise Unsupported  # a view shares the mutated storage
    args = torch.fx.node.map_arg(node.args, lambda n: e.env[n])
    kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: e.env[n])
    new = e.call(twin, args, kwargs)
    val, old = new.meta["val"], node.meta["val"]
    if val.shape != old.shape or val.dtype != old.dtype:
        raise Unsupported  # type promotion: functionalization casts back
    _mutated(e, e.env[self], new)
    return new


# ---- the whole graph -----------------------------------------------------------------------------


def _functional(op: Any) -> bool:
    schema = getattr(op, "_schema", None)
    return schema is not None and not schema.is_mutable


def direct(ep: torch.export.ExportedProgram, keep: frozenset) -> torch.export.ExportedProgram | None:
    """The decomposed form of a training-IR program built node by node (see the module
    docstring), or None where a node needs the full re-trace. `keep`: the ops lowered whole."""
    if ep.graph_signature.backward_signature is not None or not _may_take(ep, keep):
        return None
    graph = torch.fx.Graph()
    holders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    with unset_fake_temporarily():  # the mode of the graph's values, as the re-trace picks it
        fake = _detect_fake_mode_from_gm(ep.graph_module)
    if fake is None:
        return None
    e = Emit(graph, fake, {}, {}, keep)
    outputs: list[Any] = []
    try:
        for node in ep.graph.nodes:
            e.origin = node
            if node.op == "placeholder":
                new = graph.placeholder(node.name)
                if new.name != node.name:
                    return None  # a name fx reserves (`input`): the signature names the original
                new.meta.update(node.meta)
                e.bind(node, new)
            elif node.op == "call_function":
                e.bind(node, _node(e, node, keep))
            elif node.op == "output":
                outputs = list(node.args[0])
            else:
                return None  # get_attr, call_module: not in an exported training IR here
    except Unsupported:
        return None
    return _program(ep, e, holders, outputs)


def _may_take(ep: torch.export.ExportedProgram, keep: frozenset) -> bool:
    """Whether every call's op is one the direct path may handle (a cheap look before building)."""
    for node in ep.graph.nodes:
        t = node.target
        if node.op != "call_function" or t is operator.getitem or t in keep or t in REWRITES:
            continue
        if not isinstance(t, torch._ops.OpOverload) or _functional(t) or _twin(t) not in keep:
            return False
    return True


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
    ep: torch.export.ExportedProgram, e: Emit, holders: list[torch.fx.Node], outputs: list[Any]
) -> torch.export.ExportedProgram | None:
    sig = ep.graph_signature
    specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
    mutation_kind = {InputKind.BUFFER: OutputKind.BUFFER_MUTATION, InputKind.USER_INPUT: OutputKind.USER_INPUT_MUTATION}
    out_nodes: list[Any] = []
    out_specs: list[OutputSpec] = []
    for holder in holders:  # mutated buffers and inputs first, in placeholder order
        if holder not in e.current:
            continue
        spec = specs[holder.name]
        kind = mutation_kind.get(spec.kind)
        if kind is None:
            return None  # a mutated parameter or constant
        value = e.current[holder]
        target = spec.target if kind is OutputKind.BUFFER_MUTATION else holder.name
        out_nodes.append(value)
        out_specs.append(OutputSpec(kind, TensorArgument(value.name), target))
    for arg, spec in zip(outputs, sig.output_specs):
        value = e.env[arg] if isinstance(arg, torch.fx.Node) else arg
        if isinstance(arg, torch.fx.Node) != isinstance(value, torch.fx.Node):
            return None
        if spec.kind is not OutputKind.USER_OUTPUT:
            return None
        if isinstance(value, torch.fx.Node):
            spec = OutputSpec(spec.kind, TensorArgument(value.name), spec.target)
        out_nodes.append(value)
        out_specs.append(spec)
    e.graph.output(tuple(out_nodes))
    e.graph.eliminate_dead_code()
    gm = torch.fx.GraphModule(ep.graph_module, e.graph)
    new_sig = ExportGraphSignature(input_specs=list(sig.input_specs), output_specs=out_specs)
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
