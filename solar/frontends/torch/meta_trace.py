"""torch.export's training IR of a plain module, recorded on meta tensors by a pre-dispatch mode of
solar's own, without torch.export's tracer, fake tensors or dynamo.

`meta_training_ir(model, inputs)` runs forward() once on meta copies of the parameters, buffers and
inputs under a dispatch mode at torch's pre-dispatch key, where ops arrive as non-strict export
records them (`aten.linear`, `aten.conv2d`, `aten.add_` before autograd and before composite ops
decompose), and writes each op as export's graph has it: the same node names, arguments, values,
module stack (`nn_module_stack`, `@N` for a module's further calls) and source frames
(`stack_trace`); export's dead-code rule, its check before each `aten.to`, its placeholder names
and signature, state dict and module call graph. Values are meta tensors, not fake ones; the
devices in the graph are the program's own (a meta device the user code read back from a meta
tensor is recorded as the CPU, which is what it stands for).

It answers None — the caller traces with torch.export — for anything export would do more for,
or that this trace cannot see: a module that is an fx GraphModule, has hooks, holds a tensor under
two names or a tensor or Python function as a plain attribute, or whose forward() is not its
class's; inputs other than tensors; a forward() that sets module state, switches grad mode or
enters an autocast region, calls a torch.distributed function, indexes with a tensor scalar, uses a tensor it did
not make or receive (a constant), reads a tensor's value, returns anything but a flat tuple of
tensors it computed, or fails on meta tensors; and a program whose result on the meta device may
differ from the CPU's (`device_independent`: an op that consults the device, a float of less than
32 bits), which the loader checks again on the decomposed graph."""

from __future__ import annotations

import contextlib
import functools
import inspect
import operator
import os
import sys
import traceback
import types
import weakref
from collections.abc import Callable, Iterator
from types import CodeType
from typing import Any

import torch
from torch._dispatch.python import enable_python_dispatcher
from torch._export.utils import placeholder_naming_pass
from torch._export.verifier import TrainingIRVerifier
from torch._subclasses.schema_check_mode import SchemaCheckMode
from torch.export.exported_program import ModuleCallEntry, ModuleCallSignature
from torch.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from torch.nn.modules import module as nn_module
from torch.nn.utils import stateless
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from solar.frontends.torch.standins import standing_in
from solar.frontends.torch.tracing import live_frames


class Ineligible(Exception):
    """This module or call is not one the recording here provably gives torch.export's program for."""


META = torch.device("meta")
CPU = torch.device("cpu")

# ---- torch's stack-trace filter (forward frames only), without importing its list of files -------

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
# The files under torch's folder whose frames torch's filter drops (symbolic_shapes'
# uninteresting_files; checked against it in tests/frontends/test_meta_trace.py): these files,
# dynamo's polyfills, and every file of torch._higher_order_ops.
DROPPED_FILES = frozenset({
    "__init__.py", "_compile.py", "_dynamo/eval_frame.py", "_dynamo/external_utils.py",
    "_inductor/sizevars.py", "_library/custom_ops.py", "_library/fake_impl.py", "_logging/_internal.py",
    "_logging/structured.py", "_subclasses/fake_tensor.py", "_subclasses/meta_utils.py", "export/_trace.py",
    "fx/_symbolic_trace.py", "fx/experimental/recording.py", "fx/experimental/sym_node.py",
    "fx/experimental/symbolic_shapes.py", "fx/interpreter.py",
}) | frozenset(f"_dynamo/polyfills/{name}.py" for name in (
    "__init__", "_collections", "builtins", "copy", "functools", "fx", "itertools", "operator", "os",
    "struct", "sys", "tensor", "torch_c_nn", "traceback",
))
DROPPED_FOLDERS = ("_higher_order_ops/",)


def dropped(filename: str) -> bool:
    """Whether torch's stack-trace filter drops frames of this file."""
    if filename == "<string>":
        return True
    if not filename.startswith(_TORCH_DIR):
        return False
    relative = filename[len(_TORCH_DIR):].replace(os.sep, "/")
    return relative in DROPPED_FILES or relative.startswith(DROPPED_FOLDERS)


def _kept(code: CodeType) -> bool:
    anchors = torch.fx.proxy._STACK_TRACE_ANCHORS
    return (code.co_name == "forward" or (code.co_filename, code.co_name) in anchors) and not dropped(code.co_filename)


def stack_trace() -> str:
    """The stack trace torch's tracer records for a node made now, with forward frames only:
    `forward` frames and registered anchors, less the files torch's filter drops, outermost first."""
    return "".join(traceback.StackSummary.from_list(live_frames(_kept)).format()).strip()


# ---- what export sets around its trace -----------------------------------------------------------


@contextlib.contextmanager
def as_export_traces() -> Iterator[None]:
    """The backend and compiling flags torch.export's trace runs under (mkldnn, nnpack and cuDNN
    off; torch.compiler.is_compiling() and is_exporting() true)."""
    saved = (torch.backends.mkldnn.set_flags(False), torch.backends.nnpack.set_flags(False),
             torch.backends.cudnn.set_flags(False))
    flags = (torch.compiler._is_compiling_flag, torch.compiler._is_exporting_flag)
    torch.compiler._is_compiling_flag = torch.compiler._is_exporting_flag = True
    try:
        yield
    finally:
        torch.compiler._is_compiling_flag, torch.compiler._is_exporting_flag = flags
        torch.backends.mkldnn.set_flags(*saved[0])
        torch.backends.nnpack.set_flags(*saved[1])
        torch.backends.cudnn.set_flags(*saved[2])


# Python-level switches export records as graph nodes at pre-dispatch (grad mode, autocast).
_SWITCHES = frozenset({
    torch._C._set_grad_enabled, torch.amp.autocast_mode._enter_autocast, torch.amp.autocast_mode._exit_autocast,
})


# What a tensor's device reads give the program's code: the CPU's answers, as for the fake CPU
# tensors torch.export traces on (torch's kernels, in KERNEL_FOLDERS, see the meta device).
_AS_ON_CPU = {
    torch.Tensor.device.__get__: CPU,
    torch.Tensor.is_cpu.__get__: True,
    torch.Tensor.is_meta.__get__: False,
}
_NOT_READ = object()
KERNEL_FOLDERS = tuple(_TORCH_DIR + folder for folder in (
    "_refs", "_decomp", "_prims", "_meta_registrations.py", "_subclasses", "_ops.py", "_library",
))


class Guard(TorchFunctionMode):
    """Answers the program's reads of a tensor's device as on the CPU, and refuses the calls
    non-strict export records or rewrites otherwise: grad and autocast switches, indexing with a
    tensor scalar, distributed collectives."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        answer = _AS_ON_CPU.get(func, _NOT_READ)
        if answer is not _NOT_READ and not sys._getframe(1).f_code.co_filename.startswith(KERNEL_FOLDERS):
            return answer
        if func in _SWITCHES:
            raise Ineligible("a grad-mode or autocast switch")
        if getattr(func, "__name__", "") == "__getitem__" and args and isinstance(args[0], torch.Tensor):
            items = args[1] if isinstance(args[1], tuple) else (args[1],)
            for item in items:
                for x in (item.start, item.stop, item.step) if isinstance(item, slice) else (item,):
                    if isinstance(x, torch.Tensor) and x.ndim == 0:
                        raise Ineligible("indexing with a tensor scalar")
        if (getattr(func, "__module__", None) or "").startswith("torch.distributed"):
            raise Ineligible("a torch.distributed call")
        return func(*args, **(kwargs or {}))


# ---- the recording -------------------------------------------------------------------------------


def _class_name(m: torch.nn.Module) -> str:
    cls = type(m)
    return f"{cls.__module__}.{cls.__qualname__}"


class Modules:
    """The module calls open now, as export keys them in `nn_module_stack`."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.paths: dict[int, str] = {}
        for name, m in model.named_modules(remove_duplicate=False):
            if self.paths.setdefault(id(m), name) != name:
                raise Ineligible("a module held under two names")
        self.calls: dict[str, int] = {}
        self.stack: list[tuple[str, tuple[str, str]]] = []

    def enter(self, m: torch.nn.Module, *_: Any) -> None:
        path = self.paths.get(id(m))
        if path is None:
            raise Ineligible(f"a call of a module outside the model ({type(m).__name__})")
        n = self.calls.get(path, 0)
        self.calls[path] = n + 1
        key = "L__self__" + path + (f"@{n}" if n else "")
        self.stack.append((key, (path, _class_name(m))))

    def leave(self, m: torch.nn.Module, *_: Any) -> None:
        self.stack.pop()

    def current(self) -> dict[str, tuple[str, str]]:
        return dict(self.stack)

    @contextlib.contextmanager
    def hooked(self) -> Iterator[None]:
        handles = [nn_module.register_module_forward_pre_hook(self.enter),
                   nn_module.register_module_forward_hook(self.leave, always_call=True)]
        try:
            yield
        finally:
            for h in handles:
                h.remove()


def _on_meta(x: Any) -> Any:
    return META if isinstance(x, torch.device) and x.type == "cpu" else x


def _as_cpu(x: Any) -> Any:
    return CPU if isinstance(x, torch.device) and x.type == "meta" else x


@functools.cache
def _takes_device(op: torch._ops.OpOverload) -> bool:
    return any(a.name == "device" for a in op._schema.arguments)


class Recorder(SchemaCheckMode):
    """Records each op as it reaches the pre-dispatch key (the key's mode slot takes only torch's
    own modes: this is one by class, with its own `__torch_dispatch__`)."""

    def __init__(self, graph: torch.fx.Graph, modules: Modules) -> None:
        TorchDispatchMode.__init__(self, torch._C.DispatchKey.PreDispatch)
        self.graph = graph
        self.modules = modules
        # tensor -> its node, held weakly: a factory's output held here would be copied by
        # autograd's make_variable on its way to the user (a tensor with other references is)
        self.nodes: dict[int, tuple[weakref.ref, torch.fx.Node]] = {}

    def bind(self, t: torch.Tensor, node: torch.fx.Node, value: torch.Tensor | None = None) -> None:
        self.nodes[id(t)] = (weakref.ref(t), node)
        node.meta["val"] = t.detach() if value is None else value

    def node_of(self, x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            held = self.nodes.get(id(x))
            if held is None or held[0]() is not x:
                raise Ineligible("a tensor the program neither made nor received (a constant)")
            return held[1]
        return _as_cpu(x)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not isinstance(func, torch._ops.OpOverload):
            raise Ineligible(f"a call of {func}")
        node_args, node_kwargs = tree_map(self.node_of, args), tree_map(self.node_of, kwargs)
        run_kwargs = {k: _on_meta(v) for k, v in kwargs.items()}
        if "device" not in run_kwargs and _takes_device(func):
            run_kwargs["device"] = META  # a factory on the default device
        try:
            out = func(*tree_map(_on_meta, args), **run_kwargs)
        except Ineligible:
            raise
        except Exception as exc:  # noqa: BLE001  (torch.export traces it, and says what is wrong)
            raise Ineligible(f"{func} on meta tensors ({type(exc).__name__})") from None
        node = self.graph.create_node(
            "call_function", func, node_args, node_kwargs, name=self.graph._target_to_str(func.overloadpacket.__name__)
        )
        node.meta["nn_module_stack"] = self.modules.current()
        node.meta["stack_trace"] = stack_trace()
        self._track(node, out)
        return out

    def _track(self, node: torch.fx.Node, out: Any) -> None:
        if out is None:
            node.meta["val"] = None
        elif isinstance(out, torch.Tensor):
            self.bind(out, node)
        elif isinstance(out, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in out):
            values = [t.detach() for t in out]
            node.meta["val"] = values if isinstance(out, list) else tuple(values)
            for i, t in enumerate(out):
                item = self.graph.create_node("call_function", operator.getitem, (node, i), {}, name="getitem")
                item.meta.update(nn_module_stack=node.meta["nn_module_stack"], stack_trace=node.meta["stack_trace"])
                self.bind(t, item)
        else:
            raise Ineligible(f"{node.target} returns {type(out).__name__}")


# ---- the eligibility checks ----------------------------------------------------------------------

# Ops whose meta kernel or decomposition gives another result on the meta device than on the CPU
# (they consult the device: `device_hint` in torch._meta_registrations, `device.type` in
# torch._decomp and torch._refs): FFTs, eig/SVD, reflection and replication padding (memory
# format), nonzero_static, embedding bags, median/mode, scaled dot-product attention (the CPU's
# kernel keeps its inputs' layout, the meta kernel's output is contiguous), scaled matmuls,
# pixel_shuffle, histc, tensor_split by a tensor, the LSTM decomposition, bicubic upsampling; and
# `pad`, the composite that reaches the paddings, in any mode but "constant". Each with the
# condition on its node under which it does. The norms (layer, group, batch) differ only in the
# dtype of their statistics for inputs of less than 32 bits (see `REDUCED`).
def _always(node: torch.fx.Node) -> bool:
    return True


def _never(node: torch.fx.Node) -> bool:
    return False


def _not_constant_pad(node: torch.fx.Node) -> bool:
    mode = node.args[2] if len(node.args) > 2 else node.kwargs.get("mode", "constant")
    return mode != "constant"


DEVICE_DEPENDENT: dict[str, Callable[[torch.fx.Node], bool]] = {
    **dict.fromkeys((
        "_fft_c2c", "_fft_r2c", "_fft_c2r", "linalg_eig", "_linalg_svd", "reflection_pad1d", "reflection_pad2d",
        "reflection_pad3d", "replication_pad1d", "replication_pad2d", "replication_pad3d", "nonzero_static",
        "_embedding_bag", "_embedding_bag_forward_only", "median", "mode", "_scaled_dot_product_flash_attention",
        "_scaled_mm", "pixel_shuffle", "histc", "tensor_split", "lstm", "upsample_bicubic2d",
        "scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
    ), _always),
    "pad": _not_constant_pad,
}
# Floating dtypes whose CPU and CUDA kernels keep different statistics (the CPU keeps the input's
# dtype, CUDA float32): a program holding any is traced by torch.export on fake CPU tensors.
REDUCED = frozenset({torch.float16, torch.bfloat16}) | frozenset(
    getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
    if hasattr(torch, name)
)


def device_independent(graph: torch.fx.Graph) -> str | None:
    """Why the program of `graph` may not be the one fake CPU tensors give (None: it is):
    an op that consults the device, or a value of a reduced-precision float dtype."""
    for node in graph.nodes:
        op = node.target if node.op == "call_function" else None
        if isinstance(op, torch._ops.OpOverload) and DEVICE_DEPENDENT.get(op.overloadpacket.__name__, _never)(node):
            return f"{op} depends on the device"
        reduced = [v.dtype for v in tree_flatten(node.meta.get("val"))[0]
                   if isinstance(v, torch.Tensor) and v.dtype in REDUCED]
        if reduced:
            return f"a {reduced[0]} value"
    return None


def _check_module(model: torch.nn.Module, inputs: tuple) -> tuple[dict, dict]:
    if isinstance(model, torch.fx.GraphModule):
        raise Ineligible("an fx GraphModule")
    forward = getattr(inspect.unwrap(model.forward), "__func__", None)
    if forward is not type(model).forward:
        raise Ineligible("a forward() other than the class's own")
    if any(type(x) is not torch.Tensor and type(x) is not torch.nn.Parameter for x in inputs):
        raise Ineligible("an input that is not a plain tensor")
    hooks = (nn_module._global_forward_hooks, nn_module._global_forward_pre_hooks, nn_module._global_backward_hooks,
             nn_module._global_backward_pre_hooks, nn_module._global_module_registration_hooks,
             nn_module._global_buffer_registration_hooks, nn_module._global_parameter_registration_hooks)
    if any(hooks):
        raise Ineligible("global module hooks")
    for m in model.modules():
        if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks:
            raise Ineligible("module hooks")
        for k, v in vars(m).items():
            if isinstance(v, (torch.Tensor, torch.ScriptObject)):
                raise Ineligible("a tensor or script object held as a plain attribute")
            if k != "forward" and isinstance(v, (types.FunctionType, functools.partial)):
                # export lifts the parameters of modules such a function calls as constants
                raise Ineligible("a Python function held as an attribute")
    params = dict(model.named_parameters(remove_duplicate=False))
    buffers = dict(model.named_buffers(remove_duplicate=False))
    tensors = [*params.values(), *buffers.values()]
    if len({id(t) for t in tensors}) != len(tensors):
        raise Ineligible("a tensor held under two names")
    if any(t.is_meta or t.device.type != "cpu" or type(t) not in (torch.Tensor, torch.nn.Parameter) for t in tensors):
        raise Ineligible("a parameter or buffer that is not a plain CPU tensor")
    return params, buffers


def _refuse_autocast(self: Any) -> None:
    raise Ineligible("an autocast region")  # export records it as a higher-order op


@contextlib.contextmanager
def _no_autocast() -> Iterator[None]:
    """Refuses an autocast region entered in forward() (export wraps it in a higher-order op;
    autocast tells only export's own torch-function mode that it is entered)."""
    enter = torch.amp.autocast_mode.autocast.__enter__
    torch.amp.autocast_mode.autocast.__enter__ = _refuse_autocast  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.amp.autocast_mode.autocast.__enter__ = enter  # type: ignore[method-assign]


def _refuse_registration(module: torch.nn.Module, name: str, value: Any) -> None:
    raise Ineligible(f"forward() assigns {name}")  # export copies a buffer's new value into it


@contextlib.contextmanager
def _no_registration() -> Iterator[None]:
    """Refuses a buffer, parameter or submodule set in forward() (even to the object it held)."""
    handles = [register(_refuse_registration) for register in (
        nn_module.register_module_buffer_registration_hook,
        nn_module.register_module_parameter_registration_hook,
        nn_module.register_module_module_registration_hook,
    )]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _attributes(model: torch.nn.Module) -> list[tuple[int, dict]]:
    """What forward() must leave as it is: each module's attributes, parameters, buffers and
    submodules, by identity."""
    return [
        (id(m), {k: id(v) for d in (vars(m), m._parameters, m._buffers, m._modules) for k, v in d.items()})
        for m in model.modules()
    ]


def _meta_copy(t: torch.Tensor) -> torch.Tensor:
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=META)
    out.requires_grad_(t.requires_grad)
    return out


# ---- the trace -----------------------------------------------------------------------------------


_TO = frozenset({torch.ops.aten.to.device, torch.ops.aten.to.dtype, torch.ops.aten.to.dtype_layout})
_ASSERT_METADATA = torch.ops.aten._assert_tensor_metadata.default


def _assert_before_to(graph: torch.fx.Graph) -> None:
    """export's check before each `aten.to` (torch._export.utils' pass, without the imports of
    its node-metadata hook): the source's dtype, device and layout asserted, with the `to`'s
    source frames and module stack, unless the node before already asserts them."""
    for node in list(graph.nodes):
        if node.target not in _TO:
            continue
        src = node.args[0]
        if node.prev.target is _ASSERT_METADATA and node.prev.args[0] is src:
            continue
        val = src.meta.get("val")
        if val is None:
            continue
        with graph.inserting_before(node):
            check = graph.call_function(
                _ASSERT_METADATA, (src,), {"dtype": val.dtype, "device": _as_cpu(val.device), "layout": val.layout}
            )
        check.meta.update(
            val=None, stack_trace=node.meta.get("stack_trace"), nn_module_stack=node.meta.get("nn_module_stack"),
            custom=src.meta.get("custom", {}),
        )


# export's dead-code rule: a call is kept unless it is a detach or a profiler mark.
_DROPPABLE = frozenset({
    torch.ops.aten.detach.default,
    torch.ops.profiler._record_function_enter.default,
    torch.ops.profiler._record_function_enter_new.default,
    torch.ops.profiler._record_function_exit._RecordFunction,
})


def _impure(node: torch.fx.Node) -> bool:
    return node.op != "call_function" or node.target not in _DROPPABLE


def meta_training_ir(model: torch.nn.Module, inputs: tuple) -> torch.export.ExportedProgram | None:
    """torch.export.export(model, inputs, strict=False)'s training IR, recorded on meta tensors
    where that is provably the same program (see the module docstring); else None. Runs inside
    whatever torch-function modes the caller has entered around forward(). Anything that stops
    the recording is a refusal: torch.export then traces the program and reports what is wrong."""
    try:
        with standing_in():
            return _trace(model, inputs)
    except Exception:  # noqa: BLE001  (Ineligible, or a torch this recording does not know)
        return None


def _trace(model: torch.nn.Module, inputs: tuple) -> torch.export.ExportedProgram:
    params, buffers = _check_module(model, inputs)
    names = [*params, *buffers]
    held = [*params.values(), *buffers.values(), *inputs]
    metas = [_meta_copy(t) for t in held]
    graph = torch.fx.Graph()
    modules = Modules(model)
    recorder = Recorder(graph, modules)
    for i, t in enumerate(metas):
        recorder.bind(t, graph.placeholder(f"arg{i}_1"), t)  # (its own value: export keeps requires_grad)
    with stateless._reparametrize_module(model, dict(zip(names, metas[: len(names)]))):
        before = _attributes(model)
        with (as_export_traces(), _no_registration(), _no_autocast(), modules.hooked(), Guard(),
              enable_python_dispatcher(), recorder):
            try:
                out = model(*metas[len(names):])
            except Ineligible:
                raise
            except Exception as exc:  # noqa: BLE001  (torch.export traces it again, and says what is wrong)
                raise Ineligible(f"forward() failed on meta tensors ({type(exc).__name__})") from None
        if _attributes(model) != before:  # checked before the context puts the state back
            raise Ineligible("forward() assigned a module attribute")
    leaves, out_spec = tree_flatten(out)
    if not leaves or not isinstance(out, (torch.Tensor, tuple, list)) or (
        not isinstance(out, torch.Tensor) and any(not isinstance(x, torch.Tensor) for x in out)
    ):
        raise Ineligible("forward() returns something other than a tensor or a flat tuple of them")
    outs = [recorder.node_of(t) for t in leaves]
    graph.output(tuple(outs))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    why = device_independent(graph)
    if why is not None:
        raise Ineligible(why)
    gm.graph.eliminate_dead_code(_impure)
    _assert_before_to(gm.graph)
    return _program(model, gm, params, buffers, inputs, metas, out_spec)


def _program(
    model: torch.nn.Module, gm: torch.fx.GraphModule, params: dict, buffers: dict, inputs: tuple, metas: list,
    out_spec: Any,
) -> torch.export.ExportedProgram:
    """The ExportedProgram of the recorded graph, with export's names and signature."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    output = next(n for n in gm.graph.nodes if n.op == "output")
    outs = list(output.args[0])
    if set(outs) & set(placeholders) or len(set(outs)) != len(outs):
        raise Ineligible("an output that is an input or another output")
    non_persistent = {
        f"{prefix}.{b}" if prefix else b for prefix, m in model.named_modules(remove_duplicate=False)
        for b in m._non_persistent_buffers_set
    }
    specs = [InputSpec(InputKind.PARAMETER, TensorArgument(n.name), name)
             for n, name in zip(placeholders, params)]
    specs += [InputSpec(InputKind.BUFFER, TensorArgument(n.name), name, name not in non_persistent)
              for n, name in zip(placeholders[len(params):], buffers)]
    specs += [InputSpec(InputKind.USER_INPUT, TensorArgument(n.name), None)
              for n in placeholders[len(params) + len(buffers):]]
    signature = ExportGraphSignature(
        input_specs=specs,
        output_specs=[OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(o.name), None) for o in outs],
    )
    state = {**params, **buffers}
    constants = {name: buffers[name] for name in buffers if name in non_persistent}
    placeholder_naming_pass(gm, signature, model, tuple(inputs), {}, state, constants)
    gm.recompile()
    return torch.export.ExportedProgram(
        root=gm,
        graph=gm.graph,
        graph_signature=signature,
        state_dict={k: v for k, v in state.items() if k not in non_persistent},
        range_constraints={},
        module_call_graph=_call_graph(model, inputs, out_spec),
        example_inputs=(tuple(metas[len(params) + len(buffers):]), {}),
        constants=constants,
        verifiers=[TrainingIRVerifier],
    )


def _call_graph(model: torch.nn.Module, inputs: tuple, out_spec: Any) -> list[ModuleCallEntry]:
    """export's module call graph of a call preserving no submodule's signature: the root's
    input and output structure, then every submodule with none."""
    root = ModuleCallSignature(inputs=[], outputs=[], in_spec=tree_flatten((tuple(inputs), {}))[1],
                               out_spec=out_spec, forward_arg_names=_forward_arg_names(model, inputs))
    names = dict.fromkeys(name for name, _ in model.named_modules(remove_duplicate=False))
    return [ModuleCallEntry("", root)] + [ModuleCallEntry(name, None) for name in names if name]


def _forward_arg_names(model: torch.nn.Module, inputs: tuple) -> list[str]:
    """The names export records for the positional arguments (`args_0`, ... for *args)."""
    signature = inspect.signature(model.forward)
    names: list[str] = []
    for name, value in signature.bind_partial(*inputs).arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL:
            names += [f"{name}_{k}" for k in range(len(value))]
        else:
            names.append(name)
    return names
