"""Output comparison for PyTorch programs (`solar verify`): run the IR with the interpreter and the
program itself on the same random inputs and compare. At full size when the interpreter can afford
it; otherwise every distinct op instance on its own, at its shapes or at reduced shapes. The IR run
is the analysed program (recurrences are in-order loops); ops whose outputs are random draws (each
lowering module's RANDOM_OPS) are never compared."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from solar.errors import SolarError
from solar.frontends.compare import (
    FULL_BUDGET,
    Attempt,
    Check,
    CheckResult,
    capped,
    check_instance,
    conv_sizes,
    one_line,
    program_tolerance,
    relative_error,
)
from solar.frontends.builder import ProgramBuilder
from solar.frontends.files import import_model_file
from solar.frontends.torch import loader
from solar.frontends.torch.context import LowerCtx, dtype_of
from solar.frontends.torch.datasizes import data_sizes
from solar.frontends.torch.convert import convert_returning, materialise_outputs, source_line
from solar.frontends.torch.fake import held_tensors
from solar.frontends.torch.lowerings import LOWERINGS, merged, random_ops
from solar.frontends.torch.lowerings.recurrent import CELLS
from solar.frontends.torch.lowerings.registry import resolve_library
from solar.frontends.torch.traced import Traced
from solar.frontends import views
from solar.ir.interp import program_cost, run
from solar.ir.nodes import Role


def _random_like(shape: tuple[int, ...], dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    return torch.randint(0, 8, shape, generator=gen, dtype=dtype)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach()
    if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        t = t.float()
    return t.cpu().numpy()


def _flat_tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in _flat_tensors(item)]
    return []


def _whole_affordable(traced: Traced, program) -> bool:
    randoms = random_ops()
    if any(n.target in randoms for n in traced.exported.graph.nodes):
        return False  # random draws: compare op by op, the random ones skipped
    return program_cost(program) <= FULL_BUDGET


def check_file(
    path: str | Path, seed: int = 0, mode: str | None = None, infer_structure: bool = False
) -> CheckResult:
    """Compare a model file's IR with the model (see the module docstring). The IR checked is the
    analysed program itself."""
    traced = loader.trace_file(path, mode, infer_structure)
    converted = convert_returning(traced)
    if data_sizes(traced.exported, traced.source_file):
        return CheckResult(converted[0].name, (data_sized(traced),))
    if _whole_affordable(traced, converted[0]):
        module = import_model_file(path)
        torch.manual_seed(seed)
        with loader.on_cpu():
            init = getattr(module, "get_init_inputs", lambda: [])()
            model = module.Model(*init)
            loader.set_mode(model, mode)
            inputs = list(module.get_inputs())
        return CheckResult(converted[0].name, (check_whole(*converted, model, inputs),))
    return CheckResult(traced.name, check_ops(traced, seed))


def check_module(
    model: torch.nn.Module, inputs: Any, seed: int = 0, mode: str | None = None,
    infer_structure: bool = False,
) -> CheckResult:
    traced = loader.trace_module(model, inputs, mode=mode, infer_structure=infer_structure)
    converted = convert_returning(traced)
    if data_sizes(traced.exported, traced.source_file):
        return CheckResult(converted[0].name, (data_sized(traced),))
    if _whole_affordable(traced, converted[0]):
        return CheckResult(converted[0].name, (check_whole(*converted, model, list(inputs)),))
    return CheckResult(traced.name, check_ops(traced, seed))


def data_sized(traced: Traced) -> Check:
    """The one line of a program with data-dependent sizes: its IR holds each at the least size
    (0 rows), which random data does not give, so there is nothing to compare it with."""
    symbols = ", ".join(s.symbol for s in data_sizes(traced.exported, traced.source_file))
    note = (f"data-dependent sizes ({symbols}): the IR holds them at their least (0 rows) and the "
            "interpreter cannot run other sizes, so it is not compared with the program")
    return Check("whole program", "", "", "unchecked", math.inf, 0.0, note)


def _state(model: torch.nn.Module, key: str) -> torch.Tensor | None:
    """A parameter, buffer or tensor attribute (a constant torch.export lifted) by its name."""
    obj: Any = model
    for part in key.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, torch.Tensor) else None


def check_whole(program, bindings, returned, model: torch.nn.Module, inputs: list[Any]) -> Check:
    """Run the IR on copies of the inputs and state (an in-place model changes its own), then the
    model; compare every returned tensor and every input or buffer it updates in place. A returned
    alias of an input is compared with that input's data as the IR leaves it (unchanged)."""
    tensors_in = _flat_tensors(inputs)
    held = held_tensors(model, inputs)  # tensors of plain objects, traced as buffers

    def data(binding) -> torch.Tensor | None:
        kind, key = binding
        return tensors_in[key] if kind == "input" else (_state(model, key) if key not in held else held[key])

    feed = {}
    for name, binding in bindings.items():
        value = data(binding)
        if value is None:
            note = f"no data for {binding[1]}"
            return Check("whole program", "", "", "unchecked", math.inf, 0.0, note)
        feed[name] = np.array(to_numpy(value), copy=True)
    before = {r.alias: np.array(to_numpy(data(r.alias)), copy=True) for r in returned if r.alias}
    outs = run(program, feed)
    with torch.no_grad(), loader.on_cpu():
        ref = _flat_tensors(model(*inputs))
    error = 0.0
    for r in returned:
        expect = ref[r.position] if r.kind == "output" else data(r.target)
        if r.reordered:
            continue  # a permuted or sliced view: its tensor's elements are checked in order only
        got = outs[r.tensor] if r.tensor is not None else before[r.alias]
        error = max(error, relative_error(got.reshape(tuple(expect.shape)), to_numpy(expect)))
    shapes = ", ".join(str(tuple(t.shape)) for t in tensors_in)
    return Check("whole program", "", shapes, "full", error, program_tolerance(program))


def check_ops(traced: Traced, seed: int = 0) -> tuple[Check, ...]:
    """Check every distinct op instance (op, input shapes, other arguments) on its own."""
    seen: set[str] = set()
    checks: list[Check] = []
    randoms = random_ops()
    for node in traced.exported.graph.nodes:
        if node.op != "call_function" or node.target not in LOWERINGS or node.target in randoms:
            continue
        args_meta = torch.fx.node.map_arg(node.args, lambda n: n.meta.get("val"))
        key = f"{node.target}|{_describe(args_meta)}|{node.kwargs}"
        if key in seen:
            continue
        seen.add(key)
        check = _check_node(node, args_meta, traced, seed)
        if check is not None:
            checks.append(check)
    return tuple(checks)


def _describe(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).removeprefix('torch.')}{list(x.shape)}"
    if isinstance(x, (list, tuple)):
        return "(" + ", ".join(_describe(v) for v in x) + ")"
    return repr(x)


def lower_node(
    node, args: Any, out: Any
) -> tuple[Any, list[str], dict[str, np.ndarray], int]:
    """Lower one node on its own: its tensor arguments become program inputs (fed with their data
    when they are real tensors). Also returns how many statements the op itself emitted (0 for a
    pure view, whose outputs are then copies made only for the check)."""

    resolve_library()
    b = ProgramBuilder.new(str(node.name))
    feed: dict[str, np.ndarray] = {}

    def declare(t: Any) -> Any:
        if not isinstance(t, torch.Tensor):
            return t
        shape = tuple(int(s) for s in t.shape)
        name = b.declare(f"in{len(feed)}", shape, dtype_of(t.dtype), Role.INPUT)
        feed[name] = None if isinstance(t, torch._subclasses.fake_tensor.FakeTensor) or t.is_meta else to_numpy(t)
        return views.tensor(name, shape, dtype_of(t.dtype))

    ir_args = _map_tensors(args, declare)
    ctx = LowerCtx(b, _FakeNode(node.name, out))
    result = LOWERINGS[node.target](ctx, *ir_args, **node.kwargs)
    own = len(b.stmts)
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    names = materialise_outputs(b, outs)
    return b.program(list(dict.fromkeys(names))), names, feed, own


def _check_node(node, args_meta, traced, seed: int) -> Check | None:
    src = source_line(node, traced.source_file)
    program, _, _, own = lower_node(node, args_meta, node.meta.get("val"))
    if own == 0:
        return None  # a pure view: checked by the lowering-table tests and every program using it
    shrink = SHRINKERS.get(node.target, shrink_by_value)

    def attempt(cap: int | None) -> Attempt | str:
        gen = torch.Generator().manual_seed(seed)
        real_args = realise(args_meta if cap is None else shrink(args_meta, cap), gen)
        # CHECK_ARGUMENTS: random data an op needs to be valid (a grouped GEMM's offsets);
        # CHECK_REFERENCES: the op with the order the IR defines where PyTorch leaves it open (ties)
        real_args = merged("CHECK_ARGUMENTS").get(node.target, lambda a, g: a)(real_args, gen)
        reference = merged("CHECK_REFERENCES").get(node.target, node.target)
        try:
            with torch.no_grad():
                ref = reference(*real_args, **node.kwargs)
        except Exception as exc:  # reduced shapes this op does not accept
            return one_line(exc)
        program, names, feed, _ = lower_node(node, real_args, ref)
        refs = [to_numpy(r) for r in _flat_tensors(ref) if r.numel() > 0]  # empty: not outputs
        return Attempt(program, feed, names, refs, _describe(real_args))

    return check_instance(str(node.target), src, _describe(args_meta), program_cost(program), attempt)


@dataclass(frozen=True)
class _Shape:
    """A tensor to realise: shape and dtype (what the shrinkers produce)."""

    shape: tuple[int, ...]
    dtype: torch.dtype


def shrink_by_value(args: Any, cap: int) -> Any:
    """Every size above `cap` mapped to `cap`, in tensor shapes and integer arguments alike."""

    def tensor(x: Any) -> _Shape | None:
        if isinstance(x, torch.Tensor):
            return _Shape(capped(tuple(int(s) for s in x.shape), cap), x.dtype)
        return None

    return capped(args, cap, tensor)


def _shrink_convolution(args: Any, cap: int) -> Any:
    """A smaller convolution of the same kind: batch, spatial sizes, groups and channels per group
    shrink; stride, padding, dilation and kernel stay."""
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = args
    if transposed:
        cin_g, cout_g = x.shape[1] // groups, w.shape[1]
    else:
        cin_g, cout_g = w.shape[1], w.shape[0] // groups
    n, g, cin_g, cout_g, spatial = conv_sizes(
        cap, x.shape[0], groups, cin_g, cout_g, x.shape[2:], w.shape[2:], dilation
    )
    xs = _Shape((n, g * cin_g, *spatial), x.dtype)
    kernel = tuple(int(s) for s in w.shape[2:])
    ws = _Shape((g * cin_g, cout_g, *kernel) if transposed else (g * cout_g, cin_g, *kernel), w.dtype)
    bs = None if bias is None else _Shape((g * cout_g,), bias.dtype)
    return (xs, ws, bs, stride, padding, dilation, transposed, output_padding, g)


def _shrink_recurrent(args: Any, cap: int) -> Any:
    """A smaller recurrent net of the same kind: fewer steps, a smaller batch, input and hidden
    size; layers, directions, gates and flags stay (the weights are rebuilt to match)."""
    x, hx, params, has_biases, layers, dropout, train, bidirectional, batch_first = args
    states = list(hx) if isinstance(hx, (list, tuple)) else [hx]
    hidden = int(states[0].shape[-1])
    gates = int(params[1].shape[0]) // hidden
    dirs = 2 if bidirectional else 1
    steps, batch = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
    t, b, i, h = min(int(steps), cap), min(int(batch), 4), min(int(x.shape[2]), 8), min(hidden, 8)
    xs = _Shape((b, t, i) if batch_first else (t, b, i), x.dtype)
    hs = [_Shape((layers * dirs, b, h), st.dtype) for st in states]
    ps = []
    for layer in range(layers):
        width = i if layer == 0 else h * dirs
        for _ in range(dirs):
            ps += [_Shape((gates * h, width), params[0].dtype), _Shape((gates * h, h), params[0].dtype)]
            ps += [_Shape((gates * h,), params[0].dtype)] * 2 if has_biases else []
    return (xs, hs if isinstance(hx, (list, tuple)) else hs[0], ps, has_biases, layers, dropout, train, bidirectional, batch_first)


SHRINKERS = {torch.ops.aten.convolution.default: _shrink_convolution}
SHRINKERS.update({op: _shrink_recurrent for op in CELLS})


@dataclass
class _FakeNode:
    """The two things a lowering rule reads from an fx node: its name and output metadata."""

    name: str
    val: Any

    @property
    def meta(self) -> dict[str, Any]:
        return {"val": self.val}


def realise(x: Any, gen: torch.Generator) -> Any:
    """Random real tensors for every tensor (or _Shape) in an argument structure."""
    if isinstance(x, torch.Tensor):
        return _random_like(tuple(int(s) for s in x.shape), x.dtype, gen)
    if isinstance(x, _Shape):
        return _random_like(x.shape, x.dtype, gen)
    if isinstance(x, (list, tuple)):
        return type(x)(realise(v, gen) for v in x)
    return x


def _map_tensors(x: Any, fn) -> Any:
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map_tensors(v, fn) for v in x)
    return x


__all__ = ["Check", "CheckResult", "SolarError", "check_file", "check_module", "check_ops"]
