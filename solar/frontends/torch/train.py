"""Training steps of PyTorch programs: the model's forward, a loss, the backward and an optimizer
update, as one IR program. The joint forward + backward graph comes from AOTAutograd through
torch.export (a non-strict export of `loss(model(*inputs))` on fake tensors, decomposed with the
joint-loss index set): every saved-for-backward tensor and every gradient is a node of that graph.
The optimizer update (SGD with momentum, AdamW: the foreach/fused arithmetic, one element-wise
update per parameter) is IR on the parameters, their gradients and their state tensors.

Parameters with requires_grad=False get no gradient and no update, and so does a parameter the loss
does not depend on (a library model's unused or tied-away parameter): the report counts them. Gradients stay program outputs
(PyTorch keeps p.grad in memory after the step); updated parameters and state are outputs too (an
in-place update: read once, written once)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.export.graph_signature import OutputKind
from torch.utils._pytree import tree_flatten

from solar.errors import ModelFileError, SolarError, UsageError
from solar.frontends import views
from solar.frontends.builder import ProgramBuilder, add, call, loop_vars, mul, sub
from solar.frontends.detect import LOSSES, loss_spec
from solar.frontends.files import import_model_file, one_line
from solar.frontends.torch import loader
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.convert import COVERING_VIEWS, RETURNED_VALUES, convert_returning
from solar.frontends.torch.fake import fakeify, fakeify_module
from solar.frontends.torch.known import real_structure
from solar.frontends.torch.lowerings import LOWERINGS
from solar.frontends.torch.traced import Traced
from solar.ir.interp import run
from solar.ir.nodes import Load, Origin, Program, Role, walk
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update
from solar.passes import optimize as run_passes

aten = torch.ops.aten
OPTIMIZERS = ("sgd", "adamw", "none")
# Kept whole in the joint trace: attention in its CPU flash form (lowered with a saved-P backward).
OPTIMIZER_INSTANCE = 1 << 30  # the op instance of the optimizer update (one eager kernel)
SEEDS = frozenset({aten.full_like.default, aten.ones_like.default})
KEEP = frozenset({aten._scaled_dot_product_flash_attention_for_cpu.default})


@dataclass(frozen=True)
class Optimizer:
    """One optimizer step's hyper-parameters (defaults: torch.optim's, AdamW lr 1e-3 wd 1e-2)."""

    kind: str = "adamw"
    lr: float = 1e-3
    momentum: float = 0.9
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 1e-2
    step: int = 1  # the step whose bias corrections are applied (host-side scalars)

    def describe(self) -> str:
        if self.kind == "sgd":
            return f"optimizer: SGD lr={self.lr} momentum={self.momentum} (one state tensor per parameter)"
        if self.kind == "adamw":
            return (
                f"optimizer: AdamW lr={self.lr} betas={self.betas} eps={self.eps} "
                f"weight_decay={self.weight_decay} (two state tensors per parameter)"
            )
        return "optimizer: none (forward + backward only)"


@dataclass(frozen=True)
class TrainTraced:
    """A joint forward + backward ExportedProgram and how it was made."""

    traced: Traced  # the joint program, in the loader's form (convert() walks it)
    loss: str
    optimizer: Optimizer
    no_gradient: tuple[str, ...] = ()  # parameters (requiring grad) the loss does not depend on

    @property
    def flags(self):
        return self.traced.flags

    @property
    def source_file(self):
        return self.traced.source_file


class _Step(torch.nn.Module):
    """loss(model(*inputs)) as a module, so that export sees the parameters under their own names."""

    def __init__(self, model: torch.nn.Module, loss: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.model = model
        self._loss = loss

    def forward(self, *inputs: Any) -> tuple[torch.Tensor]:
        return (self._loss(self.model(*inputs), *inputs),)


def _reduce_all(how: str) -> Callable[..., torch.Tensor]:
    def loss(out: Any, *inputs: Any) -> torch.Tensor:
        if isinstance(out, (tuple, list, torch.Tensor)):
            outs = out if isinstance(out, (tuple, list)) else (out,)
        else:  # a dict or a library's output class (transformers' ModelOutput): its tensors
            outs = tree_flatten(out)[0]
        tensors = [o for o in outs if isinstance(o, torch.Tensor) and o.is_floating_point()]
        if not tensors:
            raise ModelFileError("the model returns no floating-point tensor to build a loss from")
        parts = [t.sum() if how == "sum" else t.mean() for t in tensors]
        return sum(parts[1:], parts[0])

    return loss


def loss_function(spec: str | Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """`sum` | `mean` (of every floating-point output) or `FILE:function` (called as f(output, *inputs))."""
    if callable(spec):
        return spec
    reference = loss_spec(spec, file_required=True)
    if reference is None:
        return _reduce_all(spec)
    path, name = reference
    fn = getattr(import_model_file(path), name, None)
    if not callable(fn):
        raise UsageError(f"{path} defines no function {name!r} (the --loss FILE:function form)")
    return fn


def optimizer_of(kind: str | Optimizer) -> Optimizer:
    if isinstance(kind, Optimizer):
        return kind
    if kind not in OPTIMIZERS:
        raise UsageError(f"unknown optimizer {kind!r}; use one of {', '.join(OPTIMIZERS)}")
    return Optimizer(kind) if kind != "sgd" else Optimizer("sgd", lr=1e-2, weight_decay=0.0)


# ---- tracing -------------------------------------------------------------------------------------


def _may_carry_gradient(val: Any) -> bool:
    """False for a value no gradient flows through (integer or boolean tensors, sizes); a node
    without a traced value (a higher-order op) is taken to carry one."""
    if val is None:
        return True
    vals = val if isinstance(val, (tuple, list)) else (val,)
    return any(
        isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex()) for v in vals
    )


def _without_gradient(ep: torch.export.ExportedProgram) -> tuple[str, ...]:
    """Parameters requiring grad that no floating-point path leads from to the loss (unused, or
    the unused name of a tied weight): marked as not requiring grad in the traced graph, so the
    joint trace gives them no gradient (as autograd leaves their .grad None)."""
    from torch.export.graph_signature import InputKind

    loss = next(
        (o.arg.name for o in ep.graph_signature.output_specs if o.kind is OutputKind.USER_OUTPUT),
        None,
    )
    nodes = {n.name: n for n in ep.graph.nodes}
    if loss not in nodes:
        return ()
    reaches, todo = set(), [nodes[loss]]
    while todo:
        n = todo.pop()
        if n in reaches or not _may_carry_gradient(n.meta.get("val")):
            continue
        reaches.add(n)
        todo += n.all_input_nodes
    params = [
        (str(spec.target), nodes[spec.arg.name])
        for spec in ep.graph_signature.input_specs
        if spec.kind is InputKind.PARAMETER and getattr(spec.arg, "name", None) in nodes
    ]
    used = [name for name, node in params if node in reaches]
    unused = []
    for name, node in params:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or not val.requires_grad or node in reaches:
            continue
        node.meta["val"] = val.detach()
        tensor = ep.state_dict.get(name)
        tied = next((u for u in used if tensor is not None and ep.state_dict.get(u) is tensor), None)
        unused.append(f"{name} (tied to {tied})" if tied else name)
    return tuple(unused)


def _joint(
    ep: torch.export.ExportedProgram, where: str
) -> tuple[torch.export.ExportedProgram, tuple[str, ...]]:
    """The joint forward + backward graph of an exported loss (AOTAutograd through export), and
    the parameters that get no gradient."""
    from torch.export.experimental import _copy_graph_module_and_signature, _remove_detach_pass
    from torch.export.exported_program import _decompose_exported_program

    unused = _without_gradient(ep)
    table = loader.decomposition_table()
    for op in KEEP:
        table.pop(op, None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Two stages. The joint trace itself decomposes nothing by table (composite ops
            # decompose on their own, cia_to_decomp={}, so autograd sees them): its backward holds
            # the ops autograd emits (gelu_backward, native_layer_norm_backward, ...), one eager
            # kernel each. Decomposing that graph then keeps each piece's provenance (from_node),
            # so the pieces of one backward op form one instance (one kernel in the unfused bound).
            joint = _decompose_exported_program(
                ep,
                cia_to_decomp={},
                python_decomp_table={},
                joint_loss_index=0,
                decompose_custom_triton_ops=False,
            )
            joint = joint.run_decompositions(table)
    except AssertionError as exc:
        if "did not receive a gradient" in str(exc):
            raise ModelFileError(
                f"{where}: a parameter that requires grad does not affect the loss; set "
                "requires_grad=False on unused parameters"
            ) from None
        raise
    except SolarError:
        raise
    except Exception as exc:
        raise ModelFileError(
            f"{where}: the backward could not be traced: {one_line(exc)}"
        ) from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm, sig = _copy_graph_module_and_signature(joint)
        _remove_detach_pass(gm, sig)
    for node in gm.graph.nodes:  # frames of torch's re-trace, not the user's: never shown as source
        node.meta.pop("stack_trace", None)
    return joint._update(gm, sig), unused


def _export_step(
    model: torch.nn.Module, inputs: tuple, loss: Callable, where: str
) -> torch.export.ExportedProgram:
    step = _Step(model, loss)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.export.export(step, inputs, strict=False)
    except SolarError:
        raise
    except Exception as exc:
        raise ModelFileError(
            f"{where}: torch.export could not trace the training step: {one_line(exc)}"
        ) from None


def trace_train_file(
    path: str | Path,
    loss: str = "sum",
    optimizer: str | Optimizer = "adamw",
    mode: str | None = "train",
) -> TrainTraced:
    """Trace one training step of a KernelBench-format file on fake tensors."""
    loader.check_mode(mode)
    module = import_model_file(path)
    if not hasattr(module, "Model") or not hasattr(module, "get_inputs"):
        raise ModelFileError(
            f"{Path(path).name}: a PyTorch model file defines Model and get_inputs()"
        )
    spath = str(Path(path).resolve())
    loss_fn = loss_function(loss)
    model, inputs, structure = loader.construct(module, spath)
    loader.set_mode(model, mode)
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        model = fakeify_module(model, fake)
        inputs = tuple(fakeify(x, fake) for x in inputs)
        ep = _export_step(model, inputs, loss_fn, Path(path).name)
    joint, unused = _joint(ep, Path(path).name)
    traced = Traced(joint, Path(path).stem, spath, loader.framework_flags(), mode, tuple(structure))
    return TrainTraced(traced, loss, optimizer_of(optimizer), unused)


def trace_train_module(
    model: torch.nn.Module,
    inputs: Sequence[Any],
    loss: str = "sum",
    optimizer: str | Optimizer = "adamw",
    mode: str | None = "train",
    name: str | None = None,
) -> TrainTraced:
    """Trace one training step of an in-memory module (real tensors are swapped for fake ones)."""
    if not isinstance(model, torch.nn.Module):
        raise ModelFileError(f"expected a torch.nn.Module, got {type(model).__name__}")
    loader.check_mode(mode)
    loader.set_mode(model, mode)
    where = name or type(model).__name__
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        fake_inputs = tuple(fakeify(x, fake) for x in loader.as_tuple(inputs))
        fmodel = fakeify_module(model, fake)
        ep = _export_step(fmodel, fake_inputs, loss_function(loss), where)
    joint, unused = _joint(ep, where)
    traced = Traced(
        joint, where, None, loader.framework_flags(), mode, tuple(real_structure(model))
    )
    return TrainTraced(traced, loss, optimizer_of(optimizer), unused)


# ---- lowering ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainProgram:
    """The step's program and what the report states beside its bounds."""

    program: Program
    grads: dict[str, views.View]  # parameter tensor -> its gradient (a view of a program output)
    activation_bytes: int  # peak bytes of forward activations alive (saved for backward included)
    saved_bytes: int  # bytes of the tensors the backward reads from the forward
    bindings: dict[
        str, tuple[str, Any]
    ]  # input/param tensor -> ("param", key) | ("input", position)
    state: dict[str, tuple[str, str]]  # optimizer state input -> (parameter tensor, state name)

    def gradient_tensor(self, param: str) -> str:
        """The program output holding the gradient of `param`."""
        (name,) = _loaded(self.grads[param])
        return name

    def gradient(self, param: str, arrays: dict[str, Any]) -> Any:
        """The gradient of `param` as an array in the parameter's layout, from the interpreter's
        arrays of the program's outputs (the gradient may be stored permuted)."""
        g = self.grads[param]
        stored = next(t for t in self.program.tensors if t.name == self.gradient_tensor(param))
        b = ProgramBuilder(f"grad_{param}", {stored.name: replace(stored, role=Role.INPUT)}, [])
        loops, idx = loop_vars("i", g.shape)
        out = b.temp("grad", g.shape, g.dtype)
        b.emit(loops, out.base, idx, Update.ASSIGN, g.at(idx))
        return run(b.program([out.base]), {stored.name: arrays[stored.name]})[out.base]

    def notes(self, tt: TrainTraced) -> list[str]:
        mib = 1 << 20
        loss = getattr(tt.loss, "__name__", tt.loss)
        return [
            (
                f"training step: loss={loss} of the model's output, forward + backward "
                f"(gradients of {len(self.grads)} parameters, written to memory as p.grad)"
            ),
            tt.optimizer.describe(),
            (
                f"activation memory (joint graph): peak {self.activation_bytes / mib:.3f} MiB of op "
                f"outputs alive, {self.saved_bytes / mib:.3f} MiB saved for backward"
            ),
        ] + _no_gradient_note(tt.no_gradient)


def _no_gradient_note(names: tuple[str, ...], shown: int = 3) -> list[str]:
    if not names:
        return []
    more = f", ... ({len(names) - shown} more)" if len(names) > shown else ""
    line = (
        f"{len(names)} parameter(s) get no gradient (the loss does not depend on them, or a "
        "tied weight's gradient and update come under its other name; the optimizer skips "
        f"them): {', '.join(names[:shown])}{more}"
    )
    return [line]


def lower_train(tt: TrainTraced) -> TrainProgram:
    ep = tt.traced.exported
    program, bindings, returned = convert_returning(tt.traced, optimize=False)
    grads = _gradient_outputs(ep, program, bindings, returned)
    state: dict[str, tuple[str, str]] = {}
    program = _with_optimizer(program, grads, tt.optimizer, state)
    program = run_passes(program)
    activation, saved = activation_memory(ep)
    return TrainProgram(program, grads, activation, saved, bindings, state)


def _gradient_outputs(
    ep, program: Program, bindings: dict[str, tuple[str, Any]], returned: tuple
) -> dict[str, views.View]:
    """Parameter tensor name -> its gradient, as a view in the parameter's index order of the
    program tensor holding it (a gradient returned as a permutation of a computed tensor is that
    tensor, seen through the permutation)."""
    decls = {t.name: t for t in program.tensors}
    by_target = {key: name for name, (kind, key) in bindings.items() if kind == "param"}
    outputs = list(next(n for n in ep.graph.nodes if n.op == "output").args[0])
    by_position = {r.position: r for r in returned if r.kind == "output"}
    grads: dict[str, views.View] = {}
    position = 0
    for spec, arg in zip(ep.graph_signature.output_specs, outputs):
        if spec.kind not in RETURNED_VALUES or not isinstance(arg, torch.fx.Node):
            continue
        r = by_position.get(position)
        position += 1
        if spec.kind is not OutputKind.GRADIENT_TO_PARAMETER or spec.target not in by_target:
            continue
        if r is None or r.tensor is None:
            raise SolarError(f"the gradient of {spec.target} is not a tensor the step computes")
        d, param = decls[r.tensor], decls[by_target[spec.target]]
        grad = views.tensor(d.name, d.shape, d.dtype)
        grad = _seen_as(arg, grad) if r.reordered else grad
        # a row-major reshape of the parameter when stored so (a [1, n] bias gradient)
        grads[param.name] = grad if grad.shape == param.shape else views.reshape(grad, param.shape)
    return grads


def walk_loads(e: Any) -> list[Load]:
    return [x for x in walk(e) if isinstance(x, Load)]


def _loaded(v: views.View) -> set[str]:
    """Tensors an element of view `v` reads."""
    _, idx = loop_vars("_g", v.shape)
    return {ld.tensor for _, e in v.at(idx) for ld in walk_loads(e)}


def _seen_as(node: torch.fx.Node, root: views.View) -> views.View:
    """`root` (the computed tensor behind `node`) through the covering view ops (permute, view,
    expand, ...) that lead from it to `node`, re-applied by their lowering rules (no statements)."""
    chain = []
    while isinstance(node, torch.fx.Node) and node.target in COVERING_VIEWS:
        chain.append(node)
        node = node.args[0]
    view, scratch = root, ProgramBuilder.new("view")
    for n in reversed(chain):
        view = LOWERINGS[n.target](LowerCtx(scratch, n), view, *n.args[1:], **n.kwargs)
    assert not scratch.stmts, "view lowerings emit no statements"
    return view


def _with_optimizer(
    program: Program,
    grads: dict[str, views.View],
    opt: Optimizer,
    state: dict[str, tuple[str, str]],
) -> Program:
    """The program plus the optimizer's element-wise update of every parameter with a gradient."""
    if opt.kind == "none" or not grads:
        return program
    decls = {t.name: t for t in program.tensors}
    b = ProgramBuilder(program.name, dict(decls), list(program.stmts))
    outputs = [t.name for t in program.with_role(Role.OUTPUT)]
    for param, grad in grads.items():
        p = decls[param]
        # One instance for every parameter: a fused multi-tensor kernel may update them all at once,
        # so the unfused (eager) bound charges the whole update as one kernel.
        b.origin = Origin(
            f"optimizer.{opt.kind}", OPTIMIZER_INSTANCE, f"{opt.kind} update of {param}"
        )
        before = set(b.tensors)
        outputs += UPDATES[opt.kind](b, opt, views.tensor(p.name, p.shape, p.dtype), grad)
        for name in set(b.tensors) - before:
            if b.tensors[name].role is Role.INPUT:
                state[name] = (param, name[len(param) + 1 :])
    b.origin = None
    return b.program(outputs)


def _state(b: ProgramBuilder, like: views.View, hint: str) -> views.View:
    name = b.declare(hint, like.shape, like.dtype, Role.INPUT)
    return views.tensor(name, like.shape, like.dtype)


def _sgd(b: ProgramBuilder, opt: Optimizer, p: views.View, g: views.View) -> list[str]:
    """buf = momentum * buf + g; p = p - lr * buf (torch.optim.SGD, dampening 0, no weight decay)."""
    loops, idx = loop_vars("i", p.shape)
    buf = _state(b, p, f"{p.base}_momentum")
    new_buf = b.temp(f"{p.base}_momentum_new", p.shape, p.dtype)
    b.emit(loops, new_buf.base, idx, Update.ASSIGN, add(mul(buf.at(idx), opt.momentum), g.at(idx)))
    new_p = b.temp(f"{p.base}_new", p.shape, p.dtype)
    b.emit(loops, new_p.base, idx, Update.ASSIGN, sub(p.at(idx), mul(new_buf.at(idx), opt.lr)))
    return [new_buf.base, new_p.base]


def _adamw(b: ProgramBuilder, opt: Optimizer, p: views.View, g: views.View) -> list[str]:
    """m = b1 m + (1-b1) g; v = b2 v + (1-b2) g²; p = p (1 - lr wd) - (lr/bc1) m / (sqrt(v)/sqrt(bc2) + eps)
    (torch.optim.AdamW; the bias corrections bc1, bc2 of step `opt.step` are host scalars)."""
    b1, b2 = opt.betas
    bc1, bc2 = 1 - b1**opt.step, 1 - b2**opt.step
    loops, idx = loop_vars("i", p.shape)
    m, v = _state(b, p, f"{p.base}_exp_avg"), _state(b, p, f"{p.base}_exp_avg_sq")
    gi = g.at(idx)
    m_new = b.temp(f"{p.base}_exp_avg_new", p.shape, p.dtype)
    b.emit(loops, m_new.base, idx, Update.ASSIGN, add(mul(m.at(idx), b1), mul(gi, 1 - b1)))
    v_new = b.temp(f"{p.base}_exp_avg_sq_new", p.shape, p.dtype)
    b.emit(loops, v_new.base, idx, Update.ASSIGN, add(mul(v.at(idx), b2), mul(mul(gi, gi), 1 - b2)))
    denom = add(mul(call(S.SQRT, v_new.at(idx)), 1 / bc2**0.5), opt.eps)
    step = mul(mul(m_new.at(idx), call(S.RECIP, denom)), opt.lr / bc1)
    new_p = b.temp(f"{p.base}_new", p.shape, p.dtype)
    b.emit(
        loops,
        new_p.base,
        idx,
        Update.ASSIGN,
        sub(mul(p.at(idx), 1 - opt.lr * opt.weight_decay), step),
    )
    return [m_new.base, v_new.base, new_p.base]


UPDATES: dict[str, Callable[[ProgramBuilder, Optimizer, views.View, views.View], list[str]]] = {
    "sgd": _sgd,
    "adamw": _adamw,
}


# ---- activation memory ---------------------------------------------------------------------------


def _bytes(val: Any) -> int:
    vals = val if isinstance(val, (tuple, list)) else (val,)
    return sum(v.numel() * v.element_size() for v in vals if isinstance(v, torch.Tensor))


def activation_memory(ep: torch.export.ExportedProgram) -> tuple[int, int]:
    """(peak bytes alive, bytes saved for backward) over the joint graph in its order. Every op
    output that owns storage (views alias their base; each result of a multi-output op is its own)
    lives from its node to the last use of it or of any view of it; parameters and inputs are not
    counted, gradients and temporaries are. Forward nodes are those the loss (and the forward's other
    outputs) depend on, every other node is backward; a forward tensor a backward node reads
    (directly or through a view) is saved."""
    import operator

    nodes = list(ep.graph.nodes)
    by_name = {n.name: n for n in nodes}
    grads = (OutputKind.GRADIENT_TO_PARAMETER, OutputKind.GRADIENT_TO_USER_INPUT)
    todo = [
        by_name[o.arg.name]
        for o in ep.graph_signature.output_specs
        if o.kind not in grads and getattr(o.arg, "name", None) in by_name
    ]
    forward: set = set()  # what the loss and the forward's other outputs need
    while todo:
        n = todo.pop()
        if n not in forward:
            forward.add(n)
            todo += n.all_input_nodes
    backward = {n for n in nodes if n.op == "call_function" and n not in forward}

    root: dict = {}  # node -> the node owning its storage (None: a parameter, an input, a tuple)
    for n in nodes:
        if n.op != "call_function":
            root[n] = None
        elif getattr(n.target, "is_view", False) and n.args:
            root[n] = root.get(n.args[0])
        elif n.target is operator.getitem or isinstance(n.meta.get("val"), torch.Tensor):
            root[n] = n
        else:
            root[n] = None
    last: dict = {}
    for k, n in enumerate(nodes):
        for a in n.all_input_nodes:
            if root.get(a) is not None:
                last[root[a]] = k
    alive, peak = 0, 0
    ends: dict[int, int] = {}
    for k, n in enumerate(nodes):
        if root[n] is n:
            size = _bytes(n.meta.get("val"))
            alive += size
            end = last.get(n, k)
            ends[end] = ends.get(end, 0) + size
        peak = max(peak, alive)
        alive -= ends.pop(k, 0)
    seeds = {
        n for n in backward if n.target in SEEDS
    }  # the loss's seed gradient reads a shape only
    saved_roots = {
        root[a]
        for n in backward - seeds
        for a in n.all_input_nodes
        if root.get(a) is not None and root[a] in forward
    }
    return peak, sum(_bytes(r.meta.get("val")) for r in saved_roots)


__all__ = [
    "LOSSES",
    "OPTIMIZERS",
    "Optimizer",
    "TrainProgram",
    "TrainTraced",
    "activation_memory",
    "loss_function",
    "lower_train",
    "optimizer_of",
    "trace_train_file",
    "trace_train_module",
]
