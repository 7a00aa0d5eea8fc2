"""Loading PyTorch programs without allocating them: a KernelBench-format file (Model, get_inputs,
get_init_inputs) or an in-memory module, traced with torch.export under a fake-tensor mode and
decomposed to core ATen — except the ops the lowering table lowers whole (each lowering module's
PRESERVE set: attention, recurrent nets, triangles, ...). The decomposition is built node by node
from the export's training IR where every node allows it (solar.frontends.torch.direct: the same
graph without torch's full re-trace), else by `run_decompositions`; the trace request's
TraceOptions may ask for the re-trace alone, and `export_decomposed` decides and records the route
(Traced.route, stated in the report's assumptions).

While the model is built, the loader records how tensors derive from constants (ones, arange, tril,
view, ...): a small buffer or tensor attribute built that way is recomputed for real and, when its
values form a band (a causal mask), becomes position-dependent structure instead of data to load.
With `infer_structure` the inputs are sampled once from get_inputs() and a band found there is
recorded as a stated assumption."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode, unset_fake_temporarily
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from solar.errors import ModelFileError, SolarError, TraceError, UsageError, message_line
from solar.frontends import usercode
from solar.frontends.files import import_model_file, one_line, user_frame
from solar.frontends.torch.construct import Unallocated
from solar.frontends.torch.direct import direct
from solar.frontends.torch.direct_graph import Unsupported
from solar.frontends.torch.eager import pre_decomposition_calls
from solar.frontends.torch.fake import fakeify_program, tensor_attributes
from solar.frontends.torch.held import is_state_object
from solar.frontends.torch.known import (
    REPLAY_LIMIT,
    KnownStructure,
    input_structure,
    real_structure,
    recorded_structure,
)
from solar.frontends.torch.lowerings import LOWERINGS, direct_only_ops, preserved_ops, redirects
from solar.frontends.torch.meta_trace import device_independent, meta_training_ir
from solar.frontends.torch.standins import standing_in
from solar.frontends.torch.traced import (
    DEFAULT_OPTIONS,
    Decomposition,
    Route,
    Traced,
    TraceOptions,
    mode_layers,
)
from solar.frontends.torch.tracing import cheap_stack_traces, modes_in_forward

REQUIRED = ("Model", "get_inputs")
MODES = ("train", "eval")
aten = torch.ops.aten
# Ops whose output memory is uninitialised: nothing is known about their values.
UNINITIALISED = frozenset(
    {aten.empty, aten.empty_like, aten.empty_strided, aten.new_empty, aten.new_empty_strided}
)


def framework_flags() -> tuple[tuple[str, bool], ...]:
    """PyTorch's TF32 switches as they are now (they decide which ops may use TF32 tensor cores)."""
    return (
        ("torch.backends.cuda.matmul.allow_tf32", bool(torch.backends.cuda.matmul.allow_tf32)),
        ("torch.backends.cudnn.allow_tf32", bool(torch.backends.cudnn.allow_tf32)),
    )


class Redirect(TorchFunctionMode):
    """Routes calls of the redirected torch functions to their custom ops (when the argument count
    matches the op's schema)."""

    def __init__(self, direct: bool = False) -> None:
        super().__init__()
        self.table = redirects(direct)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        # called for every torch function of user code while export traces: the common case, a
        # function not redirected, is one dict lookup
        op = self.table.get(func)
        if op is None:
            return func(*args, **kwargs) if kwargs else func(*args)
        kwargs = kwargs or {}
        if len(args) + len(kwargs) == len(op._schema.arguments):
            return op(*args, **kwargs)
        return func(*args, **kwargs)


def decomposition_table() -> Any:
    """Core-ATen decompositions of the ops the lowering table does not lower itself: an op it
    lowers (or preserves whole) reaches it as one node, so fewer nodes are traced and lowered."""
    table = torch.export.default_decompositions()
    for op in preserved_ops() | frozenset(LOWERINGS):
        table.pop(op, None)
    return table


def decompose(
    ep: torch.export.ExportedProgram, decomposition: Decomposition = Decomposition.DIRECT, retrace: bool = True
) -> tuple[torch.export.ExportedProgram | None, Route]:
    """The core-ATen form of a training-IR program and the route it took: built node by node where
    `decomposition` is DIRECT and every node allows it (solar.frontends.torch.direct), else by
    `run_decompositions` (a full re-trace; with `retrace` False, None instead)."""
    refused = None
    if decomposition is Decomposition.DIRECT:
        with unset_fake_temporarily():  # the graph's values carry export's own fake mode
            try:
                return direct(ep, preserved_ops() | frozenset(LOWERINGS)), Route(Decomposition.DIRECT)
            except Unsupported as exc:
                refused = str(exc)
            except Exception as exc:  # anything the direct path did not foresee: the re-trace decides
                refused = f"the direct path failed ({message_line(exc)})"
    route = Route(Decomposition.RETRACE, refused)
    if not retrace:
        return None, route
    return ep.run_decompositions(decomposition_table()), route


# ---- model files ---------------------------------------------------------------------------------


def _call_user(fn: Any, what: str, path: str, *args: Any) -> Any:
    """fn(*args) as user code (solar.frontends.usercode: one-line errors naming the user's line)."""
    return usercode.call(fn, what, path, *args)


def as_tuple(x: Any) -> tuple:
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def check_mode(mode: str | None) -> None:
    if mode is not None and mode not in MODES:
        raise UsageError(f"unknown module mode {mode!r}; use 'train' or 'eval' (or None: as constructed)")


def set_mode(model: torch.nn.Module, mode: str | None) -> None:
    if mode is not None:
        model.train(mode == "train")


# ---- recording how tensors derive from constants -------------------------------------------------


# Device types kept (torch's own fake and meta tensors live on "meta"); any other becomes the CPU.
_KEPT_DEVICES = ("cpu", "meta")


def _cpu(kwargs: dict) -> dict:
    device = kwargs.get("device")
    if device is not None and torch.device(device).type not in _KEPT_DEVICES:
        return dict(kwargs, device=torch.device("cpu"))
    return kwargs


class Recorder(TorchDispatchMode):
    """Keeps every tensor on the CPU (device arguments of ops are rewritten) and records, for tensors derived from constants by deterministic ops, the
    op that made them. A mutated tensor forgets its recipe, with every view sharing its storage."""

    def __init__(self, record: bool = True) -> None:
        super().__init__()
        self.record = record
        self.recipes: dict[int, tuple] = {}  # id -> (tensor, op, args, kwargs, output position)
        self.storage: dict[int, int] = {}  # id -> id of the tensor that owns its storage

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = _cpu(kwargs or {})
        out = func(*args, **kwargs)
        if self.record:
            self._note(func, args, kwargs, out)
        return out

    def _forget(self, t: torch.Tensor) -> None:
        root = self.storage.get(id(t), id(t))
        for key in [k for k, r in self.storage.items() if r == root] + [id(t)]:
            self.recipes.pop(key, None)

    def _note(self, func, args, kwargs, out) -> None:
        schema = func._schema
        if schema.is_mutable:
            for arg, value in zip(schema.arguments, args):
                if arg.alias_info is not None and arg.alias_info.is_write and isinstance(value, torch.Tensor):
                    self._forget(value)
            return
        if torch.Tag.nondeterministic_seeded in func.tags or func.overloadpacket in UNINITIALISED:
            return
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        if not all(id(t) in self.recipes for t in tensors):
            return
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for k, t in enumerate(outs):
            if isinstance(t, torch.Tensor):
                self.recipes[id(t)] = (t, func, args, kwargs, k if out is not t else None)
                if func.is_view and tensors:
                    self.storage[id(t)] = self.storage.get(id(tensors[0]), id(tensors[0]))

    def replay(self, t: torch.Tensor, limit: int = REPLAY_LIMIT) -> torch.Tensor | None:
        """The real value of a recorded tensor (None when unknown or too large)."""
        memo: dict[int, torch.Tensor] = {}

        def real(x: Any) -> Any:
            if not isinstance(x, torch.Tensor):
                return x
            if id(x) in memo:
                return memo[id(x)]
            recipe = self.recipes.get(id(x))
            if recipe is None or x.numel() > limit:
                raise LookupError
            _, func, args, kwargs, k = recipe
            value = func(*tree_map(real, args), **tree_map(real, kwargs))
            memo[id(x)] = value if k is None else value[k]
            return memo[id(x)]

        with unset_fake_temporarily(), torch.no_grad():
            try:
                return real(t)
            except LookupError:
                return None


def _cpu_device(x: Any) -> Any:
    if isinstance(x, torch.device) and x.type not in _KEPT_DEVICES:
        return torch.device("cpu")
    if isinstance(x, str):
        try:
            return "cpu" if torch.device(x).type not in _KEPT_DEVICES else x
        except (RuntimeError, ValueError):
            return x
    return x


class CpuFunctions(TorchFunctionMode):
    """Keeps user code on the CPU above the dispatcher, where device moves fail without a GPU:
    `.cuda()` and `.to("cuda")` become moves to the CPU and `device=` arguments the CPU. With
    `copy`, a move returns a new tensor, as it would across devices (while a model is built);
    without it (while forward() is traced) a move to the device a tensor is on is no op at all,
    as it is on a GPU, and costs nothing in the analysis."""

    def __init__(self, copy: bool = True) -> None:
        super().__init__()
        self.copy = copy

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if not kwargs and func is not torch.Tensor.cuda and func is not torch.Tensor.to:
            return func(*args)  # the common case while export traces: nothing to move
        moved = _cpu(kwargs or {})
        if func is torch.Tensor.cuda:
            return args[0].clone() if self.copy else args[0]
        if func is torch.Tensor.to:
            cpu_args = tuple(_cpu_device(a) for a in args)
            out = func(*cpu_args, **moved)
            rewritten = cpu_args != args or moved is not kwargs
            return out.clone() if self.copy and rewritten and out is args[0] else out
        return func(*args, **moved)


_MODULE_TO = torch.nn.Module.to


def _module_cuda(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
    return self  # every tensor stays on the CPU: moving the module to a GPU changes nothing


def _module_to(self: torch.nn.Module, *args: Any, **kwargs: Any) -> torch.nn.Module:
    """Module.to with the device dropped (tensors stay on the CPU); a dtype still converts."""
    device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args, **kwargs)
    if dtype is None and memory_format is None:
        return self
    rest = {"dtype": dtype} if dtype is not None else {}
    if memory_format is not None:
        rest["memory_format"] = memory_format
    return _MODULE_TO(self, **rest)


@contextlib.contextmanager
def device_trap() -> Iterator[None]:
    """While user code builds a model: `Module.cuda()` and `Module.to(device)` keep the module on
    the CPU (the methods are replaced in this process only while the context is active: swapping
    each fake parameter for its move fails under the fake mode)."""
    saved = (torch.nn.Module.cuda, torch.nn.Module.to)
    torch.nn.Module.cuda, torch.nn.Module.to = _module_cuda, _module_to  # type: ignore[method-assign]
    try:
        yield
    finally:
        torch.nn.Module.cuda, torch.nn.Module.to = saved  # type: ignore[method-assign]


@contextlib.contextmanager
def on_cpu(record: bool = False):
    """Run user code on the CPU (see CpuFunctions, device_trap, Recorder); yields the Recorder."""
    with device_trap(), CpuFunctions(), Recorder(record) as rec:
        yield rec


@contextlib.contextmanager
def building():
    """Run a model's construction as on a real CPU with nothing large allocated (see
    solar.frontends.torch.construct); yields the Recorder and the Unallocated mode."""
    with Unallocated() as built, on_cpu(record=True) as rec:
        yield rec, built


def construct(module: Any, spath: str) -> tuple[torch.nn.Module, tuple, list[KnownStructure]]:
    """Model(*get_init_inputs()) and get_inputs() of an imported model file, built as on a real CPU
    with nothing large allocated (`building`), and the structure of its constant buffers."""
    init_fn = getattr(module, "get_init_inputs", lambda: [])
    with building() as (rec, built):
        init_args = as_tuple(_call_user(init_fn, "get_init_inputs()", spath))
        model = _call_user(module.Model, "building Model(*get_init_inputs())", spath, *init_args)
        if not isinstance(model, torch.nn.Module):
            raise ModelFileError(f"{Path(spath).name}: Model(...) is not a torch.nn.Module")
        inputs = as_tuple(_call_user(module.get_inputs, "get_inputs()", spath))
    return model, inputs, recorded_structure(model, rec, built)


# ---- tracing -------------------------------------------------------------------------------------


def trace_file(
    path: str | Path, mode: str | None = None, infer_structure: bool = False, *,
    options: TraceOptions = DEFAULT_OPTIONS,
) -> Traced:
    """Trace a KernelBench-format file: build Model(*get_init_inputs()) and its inputs under a
    fake-tensor mode, so neither parameters nor inputs are ever allocated.

    mode: "train" or "eval" puts the module in that mode before tracing (None: as constructed).
    infer_structure: sample get_inputs() once for real and use the band structure found there.
    options: the route (its decomposition; the whole model is traced, see share.trace_file)."""
    with standing_in():  # the whole trace (building the model runs ops on the meta device too)
        model, inputs, structure, spath = build_file(path, mode, infer_structure)
        exported, calls, route = fake_export(model, inputs, spath, options)
    return Traced(exported, Path(path).stem, spath, framework_flags(), mode, structure, calls, route,
                  mode_layers(model))


def build_file(path: str | Path, mode: str | None = None, infer_structure: bool = False) -> tuple:
    """(model, inputs, structure, resolved path) of a model file, built as `trace_file` traces it
    (apart so that solar.frontends.torch.share can shorten the model before it is exported)."""
    check_mode(mode)
    module = import_model_file(path)
    missing = [n for n in REQUIRED if not hasattr(module, n)]
    if missing:
        raise ModelFileError(
            f"{Path(path).name}: defines no {', '.join(missing)}; a PyTorch model file defines "
            "class Model(nn.Module), get_inputs() and optionally get_init_inputs()"
        )
    spath = str(Path(path).resolve())
    structure: list[KnownStructure] = []
    if infer_structure:
        with on_cpu():
            sample = as_tuple(_call_user(module.get_inputs, "get_inputs()", spath))
        structure += input_structure(sample, "assumed: seen in a sample of get_inputs(), --infer-structure")
    model, inputs, built_structure = construct(module, spath)
    set_mode(model, mode)
    return model, inputs, tuple(built_structure + structure), spath


def fake_export(
    model: torch.nn.Module, inputs: tuple, path: str | None, options: TraceOptions = DEFAULT_OPTIONS
) -> tuple[torch.export.ExportedProgram, tuple, Route]:
    """The core-ATen export of `model` on fake copies of its tensors and of `inputs`, the eager
    calls before decomposition and the route the decomposition took."""
    where = Path(path).name if path else type(model).__name__
    _check_inputs(inputs, where)
    _check_state(model, where)
    if options.decomposition is Decomposition.DIRECT:
        on_meta = meta_export(model, inputs, path)
        if on_meta is not None:
            return on_meta
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        model, inputs = fakeify_program(model, inputs, fake, where)
        calls: list = []
        exported, route = _export(model, inputs, path, options.decomposition, calls)
    return exported, tuple(calls), route


def meta_export(
    model: torch.nn.Module, inputs: tuple, path: str | None
) -> tuple[torch.export.ExportedProgram, tuple, Route] | None:
    """What fake_export gives, from the training IR recorded on meta tensors
    (solar.frontends.torch.meta_trace) and the direct decomposition, without torch.export or fake
    tensors; None where either refuses the program (fake_export then traces it as it does every
    other). The functions export_decomposed redirects to custom ops are redirected here too, and
    a program that holds one of them is left to fake_export (which decides whether to trace again
    without them)."""
    where = Path(path).name if path else type(model).__name__
    with standing_in(), forward_traced(model, redirect=True):
        with usercode.running(path, "tracing forward()"):
            ep = meta_training_ir(model, inputs)
        if ep is None or not direct_only_ops().isdisjoint(n.target for n in ep.graph.nodes):
            return None
        done, route = decompose(ep, Decomposition.DIRECT, retrace=False)
    if done is None or device_independent(done.graph) is not None:
        return None
    _check_outputs(done, where)
    return done, pre_decomposition_calls(ep.graph), route


def trace_module(
    model: torch.nn.Module,
    inputs: Sequence[Any],
    name: str | None = None,
    mode: str | None = None,
    infer_structure: bool = False,
    *,
    options: TraceOptions = DEFAULT_OPTIONS,
) -> Traced:
    """Trace an in-memory module with example inputs; real tensors are replaced by fake ones of the
    same shape and dtype before tracing, so tracing allocates nothing more. With `mode` the module
    is put in that mode (and left so). `options`: as for trace_file."""
    structure = module_structure(model, inputs, mode, infer_structure)
    with standing_in():
        exported, calls, route = fake_export(model, as_tuple(inputs), None, options)
    return Traced(
        exported, name or type(model).__name__, None, framework_flags(), mode, structure, calls, route,
        mode_layers(model),
    )


def module_structure(model: Any, inputs: Sequence[Any], mode: str | None, infer_structure: bool) -> tuple:
    """The known structure of an in-memory module (put in `mode`) and its inputs, as traced."""
    if not isinstance(model, torch.nn.Module):
        raise ModelFileError(f"expected a torch.nn.Module, got {type(model).__name__}")
    check_mode(mode)
    set_mode(model, mode)
    structure = real_structure(model)
    if infer_structure:
        structure += input_structure(as_tuple(inputs), "assumed: seen in the example inputs, --infer-structure")
    return tuple(structure)


def _export(
    model: torch.nn.Module, inputs: tuple, path: str | None, decomposition: Decomposition, calls: list
) -> tuple[torch.export.ExportedProgram, Route]:
    where = Path(path).name if path else type(model).__name__
    with usercode.running(path, "tracing forward()"):
        try:
            ep, route = export_decomposed(model, inputs, decomposition, calls)
        except SolarError:
            raise
        except Exception as exc:
            line = user_frame(exc, path) if path else where
            raise TraceError(f"{line}: torch.export could not trace the model: {one_line(exc)}") from None
    _check_outputs(ep, where)
    return ep, route


@contextlib.contextmanager
def forward_traced(model: torch.nn.Module, redirect: bool) -> Iterator[None]:
    """What every trace of forward() runs under: no autograd, torch's warnings silenced, and inside
    forward() only, the REDIRECT_DIRECT functions routed to their custom ops (`redirect`) and the
    CPU-side functions."""
    modes = lambda: (Redirect(redirect), CpuFunctions(copy=False))  # noqa: E731
    with torch.no_grad(), warnings.catch_warnings(), modes_in_forward(model, modes):
        warnings.simplefilter("ignore")  # torch's own deprecation chatter, not the user's problem
        yield


def export_decomposed(
    model: torch.nn.Module, inputs: tuple, decomposition: Decomposition, calls: list
) -> tuple[torch.export.ExportedProgram, Route]:
    """torch.export of the model, decomposed, and the route taken: the one place the route is
    decided. With the direct decomposition the REDIRECT_DIRECT functions are routed to their
    custom ops; where the direct path then refuses a node and the program holds one of those ops,
    the model is exported again without them, for the direct path to try once more and the
    re-trace to decide where it refuses again. `calls` receives the ops as eager runs them (the
    eager_host level)."""
    attempts = (True, False) if decomposition is Decomposition.DIRECT else (False,)
    for redirect in attempts:
        with forward_traced(model, redirect), cheap_stack_traces():
            ep = torch.export.export(model, inputs, strict=False)
            redirected = redirect and not direct_only_ops().isdisjoint(n.target for n in ep.graph.nodes)
            done, route = decompose(ep, decomposition, retrace=not redirected)
        if done is not None:
            calls.extend(pre_decomposition_calls(ep.graph))
            return done, route
    raise AssertionError("unreachable: the last attempt re-traces")


_SCALARS = (bool, int, float)


def _check_inputs(inputs: tuple, where: str) -> None:
    """get_inputs() gives tensors (and, beside them, Python numbers and objects holding state, such
    as a KV cache): anything else, or numbers alone, break the file convention instead of
    analysing as a program without work."""
    for k, x in enumerate(inputs):
        if is_state_object(x):
            continue
        for leaf in tree_flatten(x)[0]:
            if isinstance(leaf, torch.Tensor) and leaf.is_quantized:
                raise ModelFileError(
                    f"{where}: get_inputs() item {k} is a quantized tensor ({leaf.dtype}), which "
                    "solar cannot trace; give its integer values (t.int_repr()) or the float tensor "
                    "(t.dequantize()) and quantize inside forward()"
                )
            if is_state_object(leaf):
                raise ModelFileError(
                    f"{where}: get_inputs() item {k} holds a {type(leaf).__name__} inside a "
                    f"{type(x).__name__}; pass an object holding state (a KV cache) as an item of its own"
                )
            if not isinstance(leaf, (torch.Tensor, *_SCALARS)) and leaf is not None:
                raise ModelFileError(
                    f"{where}: get_inputs() item {k} is a {type(leaf).__name__}, not a tensor; "
                    "get_inputs() returns a list of the tensors forward() takes"
                )
    if inputs and not any(isinstance(t, torch.Tensor) or is_state_object(t) for t in tree_flatten(inputs)[0]):
        kinds = ", ".join(sorted({type(x).__name__ for x in inputs}))
        raise ModelFileError(
            f"{where}: get_inputs() returned no tensor (only {kinds}); get_inputs() returns a list "
            "of the tensors forward() takes, e.g. [torch.randn(16, 1024)]"
        )


def _check_state(model: torch.nn.Module, where: str) -> None:
    """The model's parameters, buffers and tensor attributes are tensors fake ones can stand for
    (not quantized ones)."""
    held = [*model.named_parameters(), *model.named_buffers()]
    held += [(name, t) for _, _, name, t in tensor_attributes(model)]
    for name, t in held:
        if t.is_quantized:
            raise ModelFileError(
                f"{where}: the model's tensor {name} is quantized ({t.dtype}), which solar cannot "
                "trace; analyse the model with float weights (quantized models are not supported)"
            )


def _check_outputs(ep: torch.export.ExportedProgram, where: str) -> None:
    """forward() must return a tensor (or tuple / list / dict of them), not only tensors it made
    from nothing (`_created`)."""
    from torch.export.graph_signature import OutputKind, TensorArgument

    user = [s for s in ep.graph_signature.output_specs if s.kind == OutputKind.USER_OUTPUT]
    if not any(isinstance(s.arg, TensorArgument) for s in user):
        got = ", ".join(type(getattr(s.arg, "value", s.arg)).__name__ for s in user) or "None"
        raise ModelFileError(
            f"{where}: forward() returned no tensor (got {got}); forward() must return the "
            "program's output tensor(s)"
        )
    names = {s.arg.name for s in user if isinstance(s.arg, TensorArgument)}
    if all(_created(n) for n in ep.graph.nodes if n.name in names):
        raise ModelFileError(
            f"{where}: forward() returned no tensor computed from anything (only tensors it "
            "created, such as torch.ones(...)); forward() must return the program's output tensor(s)"
        )


def _created(node: Any) -> bool:
    """Whether `node` is a tensor made from nothing (torch.ones, torch.empty): an op of no tensor
    operand that draws nothing at random."""
    return (
        node.op == "call_function"
        and not node.all_input_nodes
        and torch.Tag.nondeterministic_seeded not in getattr(node.target, "tags", ())
    )
