"""Walks a core-ATen ExportedProgram and lowers every node through the one lowering table
(solar.frontends.torch.lowerings.LOWERINGS, keyed by OpOverload) into an IR Program, then runs the
IR passes (solar.passes: structure propagation, demand) on it. Recurrences are in-order loops:
the program the interpreter runs is the program the backends count."""

from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

import torch
from torch.export.graph_signature import InputKind, OutputKind

from solar.errors import SolarError, UnsupportedOpError
from solar.frontends import views
from solar.frontends.builder import ProgramBuilder, copy
from solar.frontends.torch.constants import constant_bands
from solar.frontends.torch.context import LowerCtx, concrete, dtype_of
from solar.frontends.torch.datasizes import RUN_TIME_CHECKS, checked_scalars, data_sizes, empty_result, substitution
from solar.frontends.torch.lowerings import LOWERINGS, unsupported_reasons
from solar.frontends.torch.lowerings.registry import resolve_library
from solar.frontends.torch.sources import source_line
from solar.frontends.torch.traced import Traced
from solar.frontends.views import View
from solar.heap import settled
from solar.ir.nodes import Origin, Program, Role
from solar.ir.verify import verify
from solar.passes import optimize as run_passes

# Ops whose TF32 use PyTorch governs with cuDNN's flag; every other contraction follows the
# matmul flag (torch.backends.cuda.matmul.allow_tf32).
CUDNN_OPS = {"aten.convolution.default", "aten.convolution_backward.default"}


def _instance_key(node: torch.fx.Node) -> str:
    """The user-level op this node came from: nodes decomposed from one call (silu -> sigmoid, mul)
    share it, and form one eager kernel in the unfused bound."""
    from_node = node.meta.get("from_node")
    if from_node:
        return from_node[0].name
    return node.name


def instance_numbers(exported: torch.export.ExportedProgram) -> dict[str, int]:
    """Each user-level op's instance number (`Origin.instance`): the order of first appearance of
    its key among the graph's call_function nodes."""
    numbers: dict[str, int] = {}
    for node in exported.graph.nodes:
        if node.op == "call_function":
            numbers.setdefault(_instance_key(node), len(numbers))
    return numbers


def module_path(node: torch.fx.Node) -> str:
    """The qualified name of the innermost module that called this node (`layers.3.self_attn.q_proj`),
    read from the export's `nn_module_stack`; "" for the top-level module's own ops."""
    stack = node.meta.get("nn_module_stack") or {}
    entries = list(stack.values())
    return str(entries[-1][0]) if entries else ""


# Custom ops the loader routes torch functions to for the direct lowering (lowerings.norms'
# REDIRECT_DIRECT), by the ATen op the same call is without the routing: the op reports name and
# the eager level prices.
SHOWN_AS = {"solar.batch_norm.default": "aten.batch_norm.default"}


def _original_op(node: torch.fx.Node) -> str:
    from_node = node.meta.get("from_node")
    op = str(from_node[0].target) if from_node else str(node.target)
    return SHOWN_AS.get(op, op)


Rule = Callable[..., Any]  # (ctx, *args, **kwargs) -> View or tuple of Views, as in the table


class FallbackRules(Protocol):
    """Lowering rules for ops the table lacks, asked once per node with no rule (e.g. the LLM
    frontend's synthesised lowerings). None: no rule either, and the op is unsupported."""

    def rule_for(self, node: torch.fx.Node, source: str, error: UnsupportedOpError) -> Rule | None: ...


def convert(traced: Traced, fallback: FallbackRules | None = None) -> Program:
    return convert_with_bindings(traced, fallback=fallback)[0]


Binding = tuple[str, Any]  # ("input", position among the user's tensor inputs) | ("param", key)


@dataclass(frozen=True, slots=True)
class Returned:
    """One tensor the traced program hands back, and where its value is after the run.

    `kind` is "output" (the `position`-th tensor the user's forward returns) or "mutation" (the new
    value of `target`, a user input or buffer updated in place). `tensor` names the program output
    holding the value, or the computed tensor the value is a permutation or broadcast of; it is None
    for an *alias*: a value that is an input or parameter, or a view of one (`alias` is its
    binding). `reordered`: the value is a view that is not the tensor itself or a row-major reshape
    of it (a permutation, slice, expand, ...). An alias is what eager PyTorch returns without
    running a kernel, so the program computes and moves nothing for it. A mutated input is read once (as an
    input) and its new value written once (as an output); both are compulsory, nothing else is."""

    kind: str
    position: int
    target: Binding | None
    tensor: str | None
    alias: Binding | None = None
    reordered: bool = False


def _structured(traced: Traced, kind: str, key: Any, view: View) -> View:
    for s in traced.structure:
        if s.kind == kind and s.key == key:
            return views.banded(view, s.band)
    return view


def convert_with_bindings(
    traced: Traced, optimize: bool = True,
    fallback: FallbackRules | None = None,
) -> tuple[Program, dict[str, tuple[str, Any]]]:
    """The program, and for each input/param tensor where its data comes from: ("param", state-dict
    key or constant name) or ("input", position among the user's tensor inputs). Inputs and params
    the program never reads are left out. `optimize=False` skips the IR passes. `fallback` supplies
    rules for ops the lowering table lacks."""
    program, bindings, _ = convert_returning(traced, optimize, fallback)
    return program, bindings


@settled
def convert_returning(
    traced: Traced, optimize: bool = True,
    fallback: FallbackRules | None = None,
) -> tuple[Program, dict[str, Binding], tuple[Returned, ...]]:
    """`convert_with_bindings`, plus what the program returns and mutates (see Returned)."""
    resolve_library()  # ops a model library defined on import (transformers' MoE fallback)

    ep = traced.exported
    b = ProgramBuilder.new(traced.name)
    env: dict[str, Any] = {}
    sig = ep.graph_signature
    kinds = {spec.arg.name: spec.kind for spec in sig.input_specs if hasattr(spec.arg, "name")}
    targets = {spec.arg.name: spec.target for spec in sig.input_specs if hasattr(spec.arg, "name")}
    flags = dict(traced.flags)
    instances = instance_numbers(ep)
    outputs: list[Any] = []
    bindings: dict[str, tuple[str, Any]] = {}
    placeholders: dict[str, Binding] = {}  # fx placeholder name -> binding
    view_of: dict[str, Viewed] = {}  # fx node name -> whose storage its value shares
    user_inputs = 0
    bands = constant_bands(ep)  # masks computed from constants (HF causal masks)
    sizes = substitution(data_sizes(ep, traced.source_file))  # data-dependent sizes at their least
    sizes = {**sizes, **checked_scalars(ep)}  # scalars only run-time checks read: the checks pass

    for node in ep.graph.nodes:
        if node.op == "placeholder":
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                env[node.name] = val
                continue
            kind = kinds.get(node.name, InputKind.USER_INPUT)
            role = Role.INPUT if kind == InputKind.USER_INPUT else Role.PARAM
            if role is Role.PARAM and val.numel() == 0:  # an empty constant (a cache not yet filled)
                env[node.name] = views.constant(0, tuple(int(s) for s in val.shape), dtype_of(val.dtype))
                continue
            hint = targets.get(node.name) or node.name
            name = b.declare(hint, val.shape, dtype_of(val.dtype), role)
            view = views.tensor(name, tuple(int(s) for s in val.shape), dtype_of(val.dtype))
            if role is Role.INPUT:
                bindings[name] = ("input", user_inputs)
                view = _structured(traced, "input", user_inputs, view)
                user_inputs += 1
            else:
                bindings[name] = ("param", hint)
                view = _structured(traced, "param", hint, view)
            placeholders[node.name] = bindings[name]
            view_of[node.name] = Viewed(node.name, True)
            env[node.name] = view
        elif node.op == "call_function":
            instance = instances[_instance_key(node)]
            op_name = _original_op(node)
            src = source_line(node, traced.source_file)
            tf32 = flags.get(
                "torch.backends.cudnn.allow_tf32" if str(node.target) in CUDNN_OPS
                else "torch.backends.cuda.matmul.allow_tf32",
                False,
            )
            b.origin = Origin(op_name, instance, src, tf32, module_path(node))
            args = torch.fx.node.map_arg(node.args, lambda n: env[n.name])
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n.name])
            view_of[node.name] = _viewed(node, view_of)
            if node.target is operator.getitem:
                env[node.name] = args[0][args[1]]
                continue
            if node.target in RUN_TIME_CHECKS or isinstance(node.meta.get("val"), SYMBOLIC):
                # a size computed from data-dependent sizes (sym_size, arithmetic) or a run-time
                # check: its value at the sizes the bound takes (None for a check), no work
                env[node.name] = concrete(node.meta.get("val"), sizes)
                continue
            makes_size = bool(node.meta.get("unbacked_bindings"))  # it reads what decides the size
            empty = empty_result(node.meta.get("val"), sizes) if sizes and not makes_size else None
            if empty is not None:  # no element at the data-dependent sizes taken: nothing to compute
                env[node.name] = empty
                continue
            rule = LOWERINGS.get(node.target)
            if rule is None:
                called = f" (called as {op_name})" if op_name != str(node.target) else ""
                reason = unsupported_reasons().get(node.target)
                unsupported = UnsupportedOpError(
                    f"unsupported op {node.target}{called}"
                    + (f" at {src}" if src else "")
                    + (f": {reason}" if reason else "; solar has no lowering for it yet (`solar ops` lists the supported ops)")
                )
                rule = fallback.rule_for(node, src, unsupported) if fallback is not None else None
                if rule is None:
                    raise unsupported
            ctx = LowerCtx(b, node, sizes)
            try:
                env[node.name] = rule(ctx, *args, **kwargs)
                if node.name in bands:
                    env[node.name] = views.banded(env[node.name], bands[node.name])
            except SolarError as exc:
                raise type(exc)(f"{exc} (while lowering {node.target} at {src or node.name})") from None
        elif node.op == "output":
            outputs = list(node.args[0])

    b.origin = None
    returned = _returned(b, outputs, env, sig.output_specs, placeholders, view_of)
    _mark_updates(b, returned, bindings)
    program = b.program(list(dict.fromkeys(r.tensor for r in returned if r.tensor)))
    if optimize:
        program = run_passes(program)
    program = drop_unread(program)
    verify(program)
    kept = {t.name for t in program.tensors}
    return program, {k: v for k, v in bindings.items() if k in kept}, returned


SYMBOLIC = (torch.SymInt, torch.SymBool, torch.SymFloat)


@dataclass(frozen=True, slots=True)
class Viewed:
    """The fx node whose storage a value shares (itself unless it is a view), and whether the value
    shows every element of that storage (no slice or select on the way)."""

    root: str
    covers: bool


# View ops whose result shows every element of their argument (a permutation, a reshape, a
# broadcast); other view ops (slice, select, as_strided, split pieces) may show a part.
_aten = torch.ops.aten
COVERING_VIEWS = frozenset({
    _aten.view.default, _aten.permute.default, _aten.expand.default, _aten.unsqueeze.default,
    _aten.squeeze.dims, _aten.squeeze.dim, _aten.squeeze.default, _aten.alias.default,
    _aten.transpose.int, _aten.t.default,
})


def _viewed(node: torch.fx.Node, view_of: dict[str, Viewed]) -> Viewed:
    """Whose storage `node`'s value shares: a view op (its schema's first return aliases an
    argument without writing it: view, permute, slice, expand, select, ...) or an item of a
    multi-view op (split) shares its argument's; any other op makes storage of its own."""
    if node.target is operator.getitem:
        src = node.args[0]
    else:
        schema = getattr(node.target, "_schema", None)
        info = schema.returns[0].alias_info if schema is not None and schema.returns else None
        if info is None or info.is_write or not node.args:
            return Viewed(node.name, True)
        src = node.args[0]
    if not isinstance(src, torch.fx.Node) or src.name not in view_of:
        return Viewed(node.name, True)
    inner = view_of[src.name]
    return Viewed(inner.root, inner.covers and node.target in COVERING_VIEWS)


def _returned(
    b: ProgramBuilder,
    outputs: list[Any],
    env: dict[str, Any],
    specs: list[Any],
    placeholders: dict[str, Binding],
    view_of: dict[str, Viewed],
) -> tuple[Returned, ...]:
    """What each graph output is: an alias of an input/param (no statement), or a program output.
    A view of a computed tensor that shows all of it (a permutation: eager returns it without a
    kernel) makes that tensor the output (`reordered`); any other value is materialised by
    `materialise_outputs` (a slice of a computed tensor is copied: a fused kernel may write just
    the slice). torch.export lists the new values of mutated inputs and buffers first (their specs
    say which), then the user's outputs."""
    out: list[Returned] = []
    copied: dict[str | None, list[str]] = {}
    position = 0
    for arg, spec in zip(outputs, specs):
        value = env[arg.name] if isinstance(arg, torch.fx.Node) else arg
        if not isinstance(value, View):
            continue
        if spec.kind in RETURNED_VALUES:
            kind, target, pos = "output", None, position
            position += 1
        elif spec.kind in (OutputKind.USER_INPUT_MUTATION, OutputKind.BUFFER_MUTATION):
            kind, pos = "mutation", -1
            target = _mutation_target(spec, placeholders)
        else:
            raise SolarError(
                f"the traced program returns a {spec.kind.name} output ({arg}); solar analyses "
                "forward programs: trace without gradients"
            )
        viewed = view_of.get(arg.name) if isinstance(arg, torch.fx.Node) else None
        reordered = (value.base or value.contiguous_of) is None
        root = env.get(viewed.root) if viewed is not None else None
        if viewed is not None and viewed.root in placeholders:
            out.append(Returned(kind, pos, target, None, placeholders[viewed.root], reordered))
        elif viewed is not None and viewed.covers and reordered and _computed(b, root):
            b.set_role(root.base, Role.OUTPUT)  # type: ignore[union-attr]
            out.append(Returned(kind, pos, target, root.base, None, True))
        else:
            key = arg.name if isinstance(arg, torch.fx.Node) else None
            if key not in copied:  # a value returned twice (a mutation and an output) is one tensor
                copied[key] = materialise_outputs(b, [value])  # none for an empty value
            out.extend(Returned(kind, pos, target, name) for name in copied[key])
            if key is None:
                del copied[key]
    return tuple(out)


# The loss and the gradients are outputs of a joint (training-step) graph: solar.frontends.torch.train.
RETURNED_VALUES = frozenset({OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT,
                             OutputKind.GRADIENT_TO_PARAMETER, OutputKind.GRADIENT_TO_USER_INPUT})


def _computed(b: ProgramBuilder, value: Any) -> bool:
    """Whether `value` is exactly a tensor the program writes."""
    decl = b.tensors.get(value.base) if isinstance(value, View) and value.base else None
    return decl is not None and decl.role in (Role.TEMP, Role.OUTPUT)


def _mutation_target(spec: Any, placeholders: dict[str, Binding]) -> Binding:
    """The binding of the input or buffer a mutation output writes back to."""
    if spec.kind.name == "USER_INPUT_MUTATION":
        return placeholders[spec.target]
    return ("param", spec.target)


def _mark_updates(b: ProgramBuilder, returned: tuple[Returned, ...], bindings: dict[str, Binding]) -> None:
    """A mutated input or buffer and the output holding its new value share one storage: mark the
    output as updating that input (TensorDecl.updates), so pricing charges only what changes."""
    by_binding = {binding: name for name, binding in bindings.items()}
    for r in returned:
        source = by_binding.get(r.target) if r.kind == "mutation" and r.tensor else None
        if source is None:
            continue
        out, src = b.tensors[r.tensor], b.tensors[source]
        if out.role is Role.OUTPUT and out.updates is None and (out.shape, out.dtype) == (src.shape, src.dtype):
            b.tensors[r.tensor] = replace(out, updates=source)


def drop_unread(program: Program) -> Program:
    """Leave out inputs and params no statement reads (e.g. a mask buffer used as structure); an
    output that updates a dropped input in place (it overwrites every element) updates nothing."""
    read = {ld.tensor for s in program.stmts for ld in s.loads()}
    keep = tuple(
        replace(t, updates=None) if t.updates and t.updates not in read else t
        for t in program.tensors
        if t.role not in (Role.INPUT, Role.PARAM) or t.name in read
    )
    return program if keep == program.tensors else replace(program, tensors=keep)


def materialise_outputs(b: ProgramBuilder, outputs: list[Any]) -> list[str]:
    """Each program output must be a tensor written by the program. A temp returned as is, or as a
    row-major reshape of itself, becomes the output (its elements in the same order), also when it
    is returned twice (eager returns the same tensor twice; a mutated input returned is one). Any
    other view, or an input, is copied into a fresh output tensor (a copy an eager program may not
    make: at most one trivial kernel in the unfused bound); the torch frontend never gets here with
    an input or a view of one (those are aliases, see Returned). Each copy is an op instance of its
    own (a negative id, unique: the number of statements before it)."""
    names: list[str] = []
    for k, v in enumerate(outputs):
        if not isinstance(v, View) or v.numel == 0:  # an empty output holds nothing to write
            continue
        same = v.base or v.contiguous_of  # the view is that tensor, possibly reshaped
        decl = b.tensors.get(same) if same else None
        if decl is not None and decl.role in (Role.TEMP, Role.OUTPUT):
            b.set_role(same, Role.OUTPUT)
            names.append(same)
            continue
        b.origin = Origin("output_copy", -1 - len(b.stmts))
        names.append(copy(b, f"out{k}", v).base)
    b.origin = None
    return names
