"""Loading PyTorch programs without allocating them: a KernelBench-format file (Model, get_inputs,
get_init_inputs) or an in-memory module, traced with torch.export under a fake-tensor mode and
decomposed to core ATen — except the ops the lowering table lowers whole (each lowering module's
PRESERVE set: attention, recurrent nets, triangles, ...). The decomposition is built node by node
from the export's training IR where every node allows it (solar.frontends.torch.direct: the same
graph without torch's full re-trace), else by `run_decompositions`.

While the model is built, the loader records how tensors derive from constants (ones, arange, tril,
view, ...): a small buffer or tensor attribute built that way is recomputed for real and, when its
values form a band (a causal mask), becomes position-dependent structure instead of data to load.
With `infer_structure` the inputs are sampled once from get_inputs() and a band found there is
recorded as a stated assumption."""

from __future__ import annotations

import contextlib
import pkgutil
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import torch
from torch._subclasses.fake_tensor import FakeTensorMode, unset_fake_temporarily
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from solar.errors import ModelFileError, SolarError, TraceError, UsageError
from solar.frontends import usercode
from solar.frontends.torch.known import (  # noqa: F401  (KnownStructure, REPLAY_LIMIT: used by callers)
    REPLAY_LIMIT,
    KnownStructure,
    _input_structure,
    _real_structure,
    _recorded_structure,
)
from solar.frontends.torch.fake import _fakeify, _fakeify_module  # noqa: F401  (used by callers)
from solar.frontends.torch.tracing import cheap_stack_traces, modes_in_forward

REQUIRED = ("Model", "get_inputs")
MODES = ("train", "eval")
aten = torch.ops.aten
# Ops whose output memory is uninitialised: nothing is known about their values.
UNINITIALISED = frozenset(
    {aten.empty, aten.empty_like, aten.empty_strided, aten.new_empty, aten.new_empty_strided}
)


@dataclass(frozen=True)
class Traced:
    """A core-ATen ExportedProgram plus what the analysis must know about how it was traced:
    the framework flags, the module mode it was traced in (None: as constructed) and the known
    structure of its inputs."""

    exported: torch.export.ExportedProgram
    name: str
    source_file: str | None
    flags: tuple[tuple[str, bool], ...]
    mode: str | None = None
    structure: tuple[KnownStructure, ...] = ()
    eager: tuple = ()  # the calls before decomposition (solar.frontends.torch.eager.PreCall)

    def notes(self) -> list[str]:
        """Assumption lines for the report: the module mode and the structure used."""
        mode = {
            None: "module mode: as constructed (training mode unless the file says otherwise), no gradients",
            "train": "module mode: train (model.train()), no gradients",
            "eval": "module mode: eval (model.eval()), no gradients",
        }[self.mode]
        return [mode] + [f"structure: {s.describe()}" for s in self.structure] + op_notes(self.exported)


def framework_flags() -> tuple[tuple[str, bool], ...]:
    """PyTorch's TF32 switches as they are now (they decide which ops may use TF32 tensor cores)."""
    return (
        ("torch.backends.cuda.matmul.allow_tf32", bool(torch.backends.cuda.matmul.allow_tf32)),
        ("torch.backends.cudnn.allow_tf32", bool(torch.backends.cudnn.allow_tf32)),
    )


def _lowering_tables(attr: str) -> list[Any]:
    """`attr` of every lowering module that defines it."""
    from solar.frontends.torch import lowerings

    modules = (sys.modules.get(f"{lowerings.__name__}.{m.name}") for m in pkgutil.iter_modules(lowerings.__path__))
    return [getattr(m, attr) for m in modules if hasattr(m, attr)]


def op_notes(exported: torch.export.ExportedProgram) -> list[str]:
    """Assumption lines of the ops the program uses (the NOTES tables of the lowering modules:
    how data-dependent and random ops are priced), each line once, in program order."""
    table: dict[Any, str] = {}
    for t in _lowering_tables("NOTES"):
        table.update(t)
    lines: dict[str, None] = {}
    for node in exported.graph.nodes:
        line = table.get(node.target) if node.op == "call_function" else None
        if line:
            lines.setdefault(line)
    return list(lines)


def preserved_ops() -> frozenset:
    """The union of the PRESERVE sets of the lowering modules: ops lowered whole."""
    return frozenset().union(*_lowering_tables("PRESERVE"))


def redirects(direct: bool = False) -> dict[Any, Any]:
    """torch functions routed to custom ops while tracing (the REDIRECT tables of the lowering
    modules, and with `direct` their REDIRECT_DIRECT tables, whose ops only the direct lowering
    reads): the custom ops have cheap fake implementations and are kept whole by export."""
    out: dict[Any, Any] = {}
    for table in _lowering_tables("REDIRECT") + (_lowering_tables("REDIRECT_DIRECT") if direct else []):
        out.update(table)
    return out


def _direct_only_ops() -> frozenset:
    return frozenset(op for table in _lowering_tables("REDIRECT_DIRECT") for op in table.values())


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
    from solar.frontends.torch.lowerings import LOWERINGS

    table = torch.export.default_decompositions()
    for op in preserved_ops() | frozenset(LOWERINGS):
        table.pop(op, None)
    return table


def decompose(ep: torch.export.ExportedProgram, retrace: bool = True) -> torch.export.ExportedProgram | None:
    """The core-ATen form of a training-IR program: built node by node where every node allows
    it (solar.frontends.torch.direct), else by `run_decompositions` (a full re-trace; with
    `retrace` False, None instead)."""
    from solar.frontends.torch.direct import direct
    from solar.frontends.torch.lowerings import LOWERINGS

    fast = None
    if DIRECT:
        with unset_fake_temporarily():  # the graph's values carry export's own fake mode
            try:
                fast = direct(ep, preserved_ops() | frozenset(LOWERINGS))
            except Exception:  # anything the direct path did not foresee: the re-trace decides
                fast = None
    if fast is not None or not retrace:
        return fast
    return ep.run_decompositions(decomposition_table())


DIRECT = True  # False: always re-trace (the reference the direct path is tested against)


# ---- model files ---------------------------------------------------------------------------------


from solar.frontends.files import import_model_file  # noqa: E402  (shared by every frontend)
from solar.frontends.files import one_line as _one_line  # noqa: E402
from solar.frontends.files import user_frame as _user_frame  # noqa: E402


def _call_user(fn: Any, what: str, path: str, *args: Any) -> Any:
    """fn(*args) as user code (solar.frontends.usercode: one-line errors naming the user's line)."""
    return usercode.call(fn, what, path, *args)


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _check_mode(mode: str | None) -> None:
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
    from solar.frontends.torch.construct import Unallocated

    with Unallocated() as built, on_cpu(record=True) as rec:
        yield rec, built


def construct(module: Any, spath: str) -> tuple[torch.nn.Module, tuple, list[KnownStructure]]:
    """Model(*get_init_inputs()) and get_inputs() of an imported model file, built as on a real CPU
    with nothing large allocated (`building`), and the structure of its constant buffers."""
    init_fn = getattr(module, "get_init_inputs", lambda: [])
    with building() as (rec, built):
        init_args = _as_tuple(_call_user(init_fn, "get_init_inputs()", spath))
        model = _call_user(module.Model, "building Model(*get_init_inputs())", spath, *init_args)
        if not isinstance(model, torch.nn.Module):
            raise ModelFileError(f"{Path(spath).name}: Model(...) is not a torch.nn.Module")
        inputs = _as_tuple(_call_user(module.get_inputs, "get_inputs()", spath))
    return model, inputs, _recorded_structure(model, rec, built)


# ---- tracing -------------------------------------------------------------------------------------


def trace_file(path: str | Path, mode: str | None = None, infer_structure: bool = False) -> Traced:
    """Trace a KernelBench-format file: build Model(*get_init_inputs()) and its inputs under a
    fake-tensor mode, so neither parameters nor inputs are ever allocated.

    mode: "train" or "eval" puts the module in that mode before tracing (None: as constructed).
    infer_structure: sample get_inputs() once for real and use the band structure found there."""
    model, inputs, structure, spath = build_file(path, mode, infer_structure)
    exported, calls = fake_export(model, inputs, spath)
    return Traced(exported, Path(path).stem, spath, framework_flags(), mode, structure, calls)


def build_file(path: str | Path, mode: str | None = None, infer_structure: bool = False) -> tuple:
    """(model, inputs, structure, resolved path) of a model file, built as `trace_file` traces it
    (apart so that solar.frontends.torch.share can shorten the model before it is exported)."""
    _check_mode(mode)
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
            sample = _as_tuple(_call_user(module.get_inputs, "get_inputs()", spath))
        structure += _input_structure(sample, "assumed: seen in a sample of get_inputs(), --infer-structure")
    model, inputs, built_structure = construct(module, spath)
    set_mode(model, mode)
    return model, inputs, tuple(built_structure + structure), spath


def fake_export(model: torch.nn.Module, inputs: tuple, path: str | None) -> tuple[Any, tuple]:
    """The core-ATen export of `model` on fake copies of its tensors and of `inputs`, and the
    eager calls before decomposition."""
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        model = _fakeify_module(model, fake)
        inputs = tuple(_fakeify(x, fake) for x in inputs)
        calls: list = []
        exported = _export(model, inputs, path, calls)
    return exported, tuple(calls)


def trace_module(
    model: torch.nn.Module,
    inputs: Sequence[Any],
    name: str | None = None,
    mode: str | None = None,
    infer_structure: bool = False,
) -> Traced:
    """Trace an in-memory module with example inputs; real tensors are replaced by fake ones of the
    same shape and dtype before tracing, so tracing allocates nothing more. With `mode` the module
    is put in that mode (and left so)."""
    structure = module_structure(model, inputs, mode, infer_structure)
    exported, calls = fake_export(model, _as_tuple(inputs), None)
    return Traced(exported, name or type(model).__name__, None, framework_flags(), mode, structure, calls)


def module_structure(model: Any, inputs: Sequence[Any], mode: str | None, infer_structure: bool) -> tuple:
    """The known structure of an in-memory module (put in `mode`) and its inputs, as traced."""
    if not isinstance(model, torch.nn.Module):
        raise ModelFileError(f"expected a torch.nn.Module, got {type(model).__name__}")
    _check_mode(mode)
    set_mode(model, mode)
    structure = _real_structure(model)
    if infer_structure:
        structure += _input_structure(_as_tuple(inputs), "assumed: seen in the example inputs, --infer-structure")
    return tuple(structure)


def _export(
    model: torch.nn.Module, inputs: tuple, path: str | None, calls: list | None = None
) -> torch.export.ExportedProgram:
    where = Path(path).name if path else type(model).__name__
    _check_inputs(inputs, where)
    with usercode.running(path, "tracing forward()"):
        try:
            ep = _export_decomposed(model, inputs, calls)
        except SolarError:
            raise
        except Exception as exc:
            line = _user_frame(exc, path) if path else where
            raise TraceError(f"{line}: torch.export could not trace the model: {_one_line(exc)}") from None
    _check_outputs(ep, where)
    return ep


def _export_decomposed(model: torch.nn.Module, inputs: tuple, calls: list | None) -> torch.export.ExportedProgram:
    """torch.export of the model, decomposed. With the direct lowering, the REDIRECT_DIRECT
    functions are routed to their custom ops; where the direct path then refuses a node and the
    program holds one of those ops, the model is exported again without them for the re-trace."""
    from solar.frontends.torch.eager import pre_decomposition_calls

    for direct in (True, False) if DIRECT else (False,):
        modes = lambda: (Redirect(direct), CpuFunctions(copy=False))  # noqa: E731  (inside forward() only)
        with torch.no_grad(), warnings.catch_warnings(), modes_in_forward(model, modes), cheap_stack_traces():
            warnings.simplefilter("ignore")  # torch's own deprecation chatter, not the user's problem
            ep = torch.export.export(model, inputs, strict=False)
            redirected = direct and not _direct_only_ops().isdisjoint(n.target for n in ep.graph.nodes)
            done = decompose(ep, retrace=not redirected)
        if done is not None:
            if calls is not None:  # the ops as eager runs them (the eager_host level)
                calls.extend(pre_decomposition_calls(ep.graph))
            return done
    raise AssertionError("unreachable: the last attempt re-traces")


_SCALARS = (bool, int, float)


def _check_inputs(inputs: tuple, where: str) -> None:
    """get_inputs() gives tensors (and, beside them, Python numbers): anything else, or numbers
    alone, break the file convention instead of analysing as a program without work."""
    for k, x in enumerate(inputs):
        for leaf in tree_flatten(x)[0]:
            if not isinstance(leaf, (torch.Tensor, *_SCALARS)) and leaf is not None:
                raise ModelFileError(
                    f"{where}: get_inputs() item {k} is a {type(leaf).__name__}, not a tensor; "
                    "get_inputs() returns a list of the tensors forward() takes"
                )
    if inputs and not any(isinstance(t, torch.Tensor) for t in tree_flatten(inputs)[0]):
        kinds = ", ".join(sorted({type(x).__name__ for x in inputs}))
        raise ModelFileError(
            f"{where}: get_inputs() returned no tensor (only {kinds}); get_inputs() returns a list "
            "of the tensors forward() takes, e.g. [torch.randn(16, 1024)]"
        )


def _check_outputs(ep: torch.export.ExportedProgram, where: str) -> None:
    """forward() must return a tensor (or tuple / list / dict of them)."""
    from torch.export.graph_signature import OutputKind, TensorArgument

    user = [s for s in ep.graph_signature.output_specs if s.kind == OutputKind.USER_OUTPUT]
    if not any(isinstance(s.arg, TensorArgument) for s in user):
        got = ", ".join(type(getattr(s.arg, "value", s.arg)).__name__ for s in user) or "None"
        raise ModelFileError(
            f"{where}: forward() returned no tensor (got {got}); forward() must return the "
            "program's output tensor(s)"
        )
