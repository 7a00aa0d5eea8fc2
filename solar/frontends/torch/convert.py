"""Walks a core-ATen ExportedProgram and lowers every node through the one lowering table
(solar.frontends.torch.lowerings.LOWERINGS, keyed by OpOverload) into an IR Program, then runs the
IR passes (solar.passes: structure propagation, demand) on it.

Two forms of one program: the *analysis* form (default) keeps the IR's size independent of trip
counts (a recurrent net's time loop is a loop variable), the *executable* form is what the
interpreter runs exactly (recurrences unrolled step by step). Their counts are equal (tested)."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Protocol

import torch
from torch.export.graph_signature import InputKind

from solar.errors import SolarError, UnsupportedOpError
from solar.frontends import views
from solar.frontends.builder import ProgramBuilder
from solar.frontends.torch.loader import Traced
from solar.frontends.views import View
from solar.ir.dtypes import DType
from solar.ir.nodes import Origin, Program, Role
from solar.ir.scalar_ops import Update
from solar.ir.verify import verify

DTYPES: dict[torch.dtype, DType] = {
    torch.float64: DType.F64,
    torch.float32: DType.F32,
    torch.float16: DType.F16,
    torch.bfloat16: DType.BF16,
    torch.float8_e4m3fn: DType.F8E4M3,
    torch.float8_e5m2: DType.F8E5M2,
    torch.int64: DType.I64,
    torch.int32: DType.I32,
    torch.int16: DType.I16,
    torch.int8: DType.I8,
    torch.uint8: DType.U8,
    torch.bool: DType.BOOL,
}

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)')

# Ops whose TF32 use PyTorch governs with cuDNN's flag; every other contraction follows the
# matmul flag (torch.backends.cuda.matmul.allow_tf32).
CUDNN_OPS = {"aten.convolution.default", "aten.convolution_backward.default"}


def dtype_of(t: torch.dtype) -> DType:
    try:
        return DTYPES[t]
    except KeyError:
        raise SolarError(f"tensors of dtype {t} are not supported yet") from None


@dataclass
class LowerCtx:
    """What a lowering rule sees: the builder, the node being lowered and its output metadata, and
    whether to emit the executable form (see the module docstring)."""

    b: ProgramBuilder
    node: torch.fx.Node
    executable: bool = False

    @property
    def val(self) -> Any:
        return self.node.meta.get("val")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self.val.shape)

    @property
    def dtype(self) -> DType:
        return dtype_of(self.val.dtype)

    @property
    def hint(self) -> str:
        return self.node.name

    def meta(self, k: int) -> tuple[tuple[int, ...], DType]:
        """Shape and dtype of output k of a multi-output op."""
        v = self.val[k]
        return tuple(int(s) for s in v.shape), dtype_of(v.dtype)


def source_line(node: torch.fx.Node, source_file: str | None) -> str:
    """`file.py:LINE: code` of the user's frame that produced the node (last frame in the user's
    file, else the last frame outside torch)."""
    trace = node.meta.get("stack_trace") or ""
    frames = _FRAME.findall(trace)
    if not frames:
        return ""
    pick = None
    for f in frames:
        if source_file and Path(f[0]).resolve() == Path(source_file):
            pick = f
    if pick is None:
        outside = [f for f in frames if "/torch/" not in f[0] and "/site-packages/" not in f[0]]
        pick = outside[-1] if outside else frames[-1]
    code = pick[3].strip().replace('"', "'")  # the IR text quotes sources with "
    return f"{Path(pick[0]).name}:{pick[1]}: {code}"


def _instance_key(node: torch.fx.Node) -> str:
    """The user-level op this node came from: nodes decomposed from one call (silu -> sigmoid, mul)
    share it, and form one eager kernel in the unfused bound."""
    from_node = node.meta.get("from_node")
    if from_node:
        return from_node[0].name
    return node.name


def _original_op(node: torch.fx.Node) -> str:
    from_node = node.meta.get("from_node")
    if from_node:
        return str(from_node[0].target)
    return str(node.target)


Rule = Callable[..., Any]  # (ctx, *args, **kwargs) -> View or tuple of Views, as in the table


class FallbackRules(Protocol):
    """Lowering rules for ops the table lacks, asked once per node with no rule (e.g. the LLM
    frontend's synthesised lowerings). None: no rule either, and the op is unsupported."""

    def rule_for(self, node: torch.fx.Node, source: str, error: UnsupportedOpError) -> Rule | None: ...


def convert(traced: Traced, executable: bool = False, fallback: FallbackRules | None = None) -> Program:
    return convert_with_bindings(traced, executable, fallback=fallback)[0]


def _structured(traced: Traced, kind: str, key: Any, view: View) -> View:
    for s in traced.structure:
        if s.kind == kind and s.key == key:
            return views.banded(view, s.band)
    return view


def convert_with_bindings(
    traced: Traced, executable: bool = False, optimize: bool = True,
    fallback: FallbackRules | None = None,
) -> tuple[Program, dict[str, tuple[str, Any]]]:
    """The program, and for each input/param tensor where its data comes from: ("param", state-dict
    key or constant name) or ("input", position among the user's tensor inputs). Inputs and params
    the program never reads are left out. `optimize=False` skips the IR passes. `fallback` supplies
    rules for ops the lowering table lacks."""
    from solar.frontends.torch.lowerings import LOWERINGS
    from solar.passes import optimize as run_passes

    ep = traced.exported
    b = ProgramBuilder.new(traced.name)
    env: dict[str, Any] = {}
    sig = ep.graph_signature
    kinds = {spec.arg.name: spec.kind for spec in sig.input_specs if hasattr(spec.arg, "name")}
    targets = {spec.arg.name: spec.target for spec in sig.input_specs if hasattr(spec.arg, "name")}
    flags = dict(traced.flags)
    instances: dict[str, int] = {}
    outputs: list[Any] = []
    bindings: dict[str, tuple[str, Any]] = {}
    user_inputs = 0

    for node in ep.graph.nodes:
        if node.op == "placeholder":
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor):
                env[node.name] = val
                continue
            kind = kinds.get(node.name, InputKind.USER_INPUT)
            role = Role.INPUT if kind == InputKind.USER_INPUT else Role.PARAM
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
            env[node.name] = view
        elif node.op == "call_function":
            key = _instance_key(node)
            instance = instances.setdefault(key, len(instances))
            op_name = _original_op(node)
            src = source_line(node, traced.source_file)
            tf32 = flags.get(
                "torch.backends.cudnn.allow_tf32" if str(node.target) in CUDNN_OPS
                else "torch.backends.cuda.matmul.allow_tf32",
                False,
            )
            b.origin = Origin(op_name, instance, src, tf32)
            args = torch.fx.node.map_arg(node.args, lambda n: env[n.name])
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n.name])
            if node.target is operator.getitem:
                env[node.name] = args[0][args[1]]
                continue
            rule = LOWERINGS.get(node.target)
            if rule is None:
                called = f" (called as {op_name})" if op_name != str(node.target) else ""
                unsupported = UnsupportedOpError(
                    f"unsupported op {node.target}{called}"
                    + (f" at {src}" if src else "")
                    + "; solar has no lowering for it yet (`solar ops` lists the supported ops)"
                )
                rule = fallback.rule_for(node, src, unsupported) if fallback is not None else None
                if rule is None:
                    raise unsupported
            ctx = LowerCtx(b, node, executable)
            try:
                env[node.name] = rule(ctx, *args, **kwargs)
            except SolarError as exc:
                raise type(exc)(f"{exc} (while lowering {node.target} at {src or node.name})") from None
        elif node.op == "output":
            outputs = [env[a.name] if isinstance(a, torch.fx.Node) else a for a in node.args[0]]

    b.origin = None
    out_names = _materialise_outputs(b, outputs)
    program = b.program(out_names)
    if optimize:
        program = run_passes(program)
    program = _drop_unread(program)
    verify(program)
    kept = {t.name for t in program.tensors}
    return program, {k: v for k, v in bindings.items() if k in kept}


def _drop_unread(program: Program) -> Program:
    """Leave out inputs and params no statement reads (e.g. a mask buffer used as structure)."""
    read = {ld.tensor for s in program.stmts for ld in s.loads()}
    keep = tuple(t for t in program.tensors if t.role not in (Role.INPUT, Role.PARAM) or t.name in read)
    return program if len(keep) == len(program.tensors) else replace(program, tensors=keep)


def _materialise_outputs(b: ProgramBuilder, outputs: list[Any]) -> list[str]:
    """Each program output must be a tensor written by the program. A temp returned as is, or as a
    row-major reshape of itself, becomes the output (its elements in the same order); any other view,
    an input or a tensor returned twice is copied into a fresh output tensor (a copy an eager program
    may not make: at most one trivial kernel in the unfused bound)."""
    from solar.frontends.builder import loop_vars

    names: list[str] = []
    for k, v in enumerate(outputs):
        if not isinstance(v, View):
            continue
        same = v.base or v.contiguous_of  # the view is that tensor, possibly reshaped
        decl = b.tensors.get(same) if same else None
        if decl is not None and decl.role is Role.TEMP and same not in names:
            names.append(same)
            continue
        b.origin = Origin("output_copy", -1 - k)
        loops, idx = loop_vars("i", v.shape)
        out = b.temp(f"out{k}", v.shape, v.dtype)
        b.emit(loops, out.base, idx, Update.ASSIGN, v.at(idx))
        names.append(out.base)
    b.origin = None
    return names
