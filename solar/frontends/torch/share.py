"""Structure sharing for model files and in-memory modules (the forward pass): a model built with a
stack of N >= MIN_LAYERS identical layers is exported with TRACED of them (0, 1, 2 and N-1) and the
N-layer program is stitched from that trace (solar.frontends.torch.stitch), as the `hf:` steps are.

A module or file comes without a config to build a shorter model from, so the model the user built
is shortened in place for the export and restored at once (`shortened`: the user's object on the
API path). A stack is a `nn.ModuleList`, or a `nn.Sequential` whose children are named "0".."N-1",
such that (`stacks`):
- layers 1..N-1 have one `layer_signature` (layer 0 may differ: ResNet's first block downsamples,
  T5's first block holds the position bias; the stitch copies layer 1, never layer 0);
- no parameter or buffer of a layer is reachable from another layer or from outside the stack
  (tied weights), nor any module of a layer, nor the stack itself, under another path (so nothing
  but the stack's own iteration calls a layer);
- the known structure of the layers' buffers (causal masks) is the same in layers 1..N-1.
Every stack that saves at least MIN_SAVING of the model's modules (N - TRACED times its layer's
submodules) is shortened, none inside another's layers (`disjoint`), and the program is stitched
stack by stack.

Shortening changes what a forward sees only through the stack: iteration gives TRACED layers. A
forward that indexes the stack by a count it keeps (`for i in range(self.n): self.layers[i]`) fails
to export; one that reads `len(self.layers)` (as a count, a scale, or through indexing, which
calls len) is caught by the shortened stack's class, which records the call: both fall back to a
full trace. The stitch itself proves the rest (stitch.plan: layers 1 and 2 equal up to renaming).
Any failure of the attempt traces the whole model, with a `layers not shared: <why>` note. A trace
request whose options say `share_layers=False` traces the whole model, with no note."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from solar.errors import AnalysisTimeout, message_line
from solar.frontends.torch import loader
from solar.frontends.torch.signature import layer_signature
from solar.frontends.torch.standins import standing_in
from solar.frontends.torch.stitch import TRACED, NotShareable, Stitched, lower_shared
from solar.frontends.torch.traced import DEFAULT_OPTIONS, Traced, TraceOptions, mode_layers
from solar.ir.nodes import Program

MIN_LAYERS = TRACED + 1  # fewer layers save nothing: the trace has TRACED of them anyway
CONTAINERS = (torch.nn.ModuleList, torch.nn.Sequential)
# A stack is shortened only where it holds this share of the model's modules: a forward the stitch
# refuses late (after the short export) costs a second, whole trace, which a small saving (DETR's
# 6 decoder layers beside a ResNet-50) does not pay for.
MIN_SAVING = 0.2


@dataclass(frozen=True)
class Stack:
    """A repeated-layer container: its module path as torch.export records it (`encoder.layer`),
    the container, its layer count and what stitching it saves (submodules not traced)."""

    path: str
    container: torch.nn.Module
    layers: int
    saving: int


@dataclass(frozen=True)
class Outcome:
    """A trace for the analysis: `program` stitched (and `traced` a stitch.Stitched) where the layers
    were shared, else None (`traced` the full Traced, to lower as usual); `note`: the
    report's line on sharing (None: the model has no stack to share)."""

    program: Program | None
    traced: Traced | Stitched
    note: str | None


# ---- finding stacks ------------------------------------------------------------------------------


def _indexed(mod: torch.nn.Module) -> bool:
    return list(mod._modules) == [str(k) for k in range(len(mod._modules))]


def _owners(model: torch.nn.Module) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """Every path under which each module and each parameter or buffer (by id) is reachable."""
    modules: dict[int, set[str]] = {}
    for path, mod in model.named_modules(remove_duplicate=False):
        modules.setdefault(id(mod), set()).add(path)
    tensors: dict[int, set[str]] = {}
    for path, t in (*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)):
        tensors.setdefault(id(t), set()).add(path)
    return modules, tensors


def _unshareable(path: str, stack: torch.nn.Module, owners: tuple, structure: Sequence[Any]) -> str | None:
    """Why the container at `path` is not a stack to share (None: it is)."""
    modules, tensors = owners
    n = len(stack._modules)
    if modules[id(stack)] != {path}:
        return f"{path} is also reachable as {sorted(modules[id(stack)] - {path})[0]}"
    layers = list(stack._modules.values())
    one = layer_signature(layers[1])
    for k in range(2, n):
        if layer_signature(layers[k]) != one:
            return f"layer {k} of {path} differs from layer 1 (class, parameter shapes or attributes)"
    for k, layer in enumerate(layers):
        head = f"{path}.{k}" if path else str(k)
        for sub in layer.modules():
            other = [p for p in modules[id(sub)] if p != head and not p.startswith(head + ".")]
            if other:
                return f"a module of {head} is also reachable as {sorted(other)[0]}"
        for t in (*layer.parameters(), *layer.buffers()):
            other = [p for p in tensors[id(t)] if not p.startswith(head + ".")]
            if other:
                return f"a parameter or buffer of {head} is also {sorted(other)[0]} (tied weights)"
    known = [_layer_structure(structure, f"{path}.{k}." if path else f"{k}.") for k in range(1, n)]
    if any(s != known[0] for s in known):
        return f"the known structure of the buffers of {path}'s layers differs between layers"
    return None


def _layer_structure(structure: Sequence[Any], head: str) -> list:
    return sorted(
        (s.key[len(head):], repr(s.band)) for s in structure if s.kind == "param" and str(s.key).startswith(head)
    )


def stacks(model: torch.nn.Module, structure: Sequence[Any] = ()) -> tuple[list[Stack], list[str]]:
    """The stacks of `model` (see the module docstring) that save at least MIN_SAVING of its
    modules, the one that saves the most first, and why each other container of MIN_LAYERS or more
    children is not one (the largest first)."""
    owners = _owners(model)
    total = sum(1 for _ in model.modules())
    found: list[Stack] = []
    why: list[tuple[int, str]] = []
    for path, mod in model.named_modules():
        if not isinstance(mod, CONTAINERS) or len(mod._modules) < MIN_LAYERS or not _indexed(mod):
            continue
        if len({type(m) for m in list(mod._modules.values())[1:]}) > 1:
            continue  # not a stack of layers (a Sequential of Linear, ReLU, ...): no note either
        size = sum(1 for _ in mod._modules["1"].modules())
        saving = (len(mod._modules) - TRACED) * size
        reason = _unshareable(path, mod, owners, structure)
        if reason is not None:
            why.append((saving, reason))
        elif saving >= MIN_SAVING * total:
            found.append(Stack(path, mod, len(mod._modules), saving))
    found.sort(key=lambda s: -s.saving)
    return found, [r for _, r in sorted(why, key=lambda x: -x[0])]


# ---- shortening ----------------------------------------------------------------------------------


class _Counted:
    """Mixed into a shortened stack's class: records every len() of the stack (the forward reads
    the layer count, which shortening changes). The mark `_solar_shortened` tells the stack (and
    the fake copy the export runs) from a slice of it (`self.layers[:n]`, Llama's forward), which
    torch makes as a new instance of the class and fills through len() of its own."""

    def __len__(self) -> int:
        if self.__dict__.get("_solar_shortened"):
            type(self)._solar_lens.append(1)
        return super().__len__()  # type: ignore[misc]


def _counting(cls: type) -> type:
    """A subclass of `cls` that counts len() calls, named as `cls` (export's module stack records
    class names)."""
    sub = type(cls.__name__, (_Counted, cls), {"_solar_lens": []})
    sub.__module__, sub.__qualname__ = cls.__module__, cls.__qualname__
    return sub


@contextlib.contextmanager
def shortened(stack: Stack) -> Iterator[list]:
    """The stack holding layers 0, 1, 2 and N-1 (named "0".."3") while the body runs, the user's
    module restored however the body ends; yields the list of len() calls made meanwhile."""
    mod = stack.container
    saved_modules, saved_class = mod._modules, type(mod)
    layers = list(saved_modules.values())
    keep = [*layers[: TRACED - 1], layers[-1]]
    mod.__class__ = _counting(saved_class)
    mod._modules = OrderedDict((str(k), m) for k, m in enumerate(keep))
    mod.__dict__["_solar_shortened"] = True
    try:
        yield type(mod)._solar_lens
    finally:
        mod.__dict__.pop("_solar_shortened", None)
        mod._modules, mod.__class__ = saved_modules, saved_class


# ---- tracing -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """The export of a built model: of its shortened form where stacks were found and the short
    export succeeded (`stacks` not empty), else of the whole model (`why`: the report's reason,
    None where the model has no stack); `whole` traces the whole model (for a late refusal)."""

    traced: Traced
    stacks: tuple[Stack, ...]
    why: str | None
    whole: Callable[[], Traced]


def disjoint(found: Sequence[Stack]) -> tuple[Stack, ...]:
    """The stacks to shorten together, the largest saving first: none inside another's layers
    (T5's encoder and decoder blocks, CLIP's two towers; a stage's blocks inside a larger stack's
    layer are not)."""
    out: list[Stack] = []
    for st in found:
        if all(not _inside(st.path, o.path) and not _inside(o.path, st.path) for o in out):
            out.append(st)
    return tuple(out)


def _inside(path: str, outer: str) -> bool:
    return outer == "" or path == outer or path.startswith(outer + ".")


def start(
    model: torch.nn.Module, inputs: tuple, path: str | None, name: str, mode: str | None, structure: tuple,
    options: TraceOptions = DEFAULT_OPTIONS,
) -> Attempt:
    """Export `model` with its stacks shortened, or whole (see the module docstring); `options`:
    the decomposition of either export."""
    layers = mode_layers(model)  # of the whole model: the shortened one has the same kinds

    def traced(exported: Any, calls: tuple, route: Any) -> Traced:
        return Traced(exported, name, path, loader.framework_flags(), mode, structure, calls, route, layers)

    def whole() -> Traced:
        return traced(*loader.fake_export(model, inputs, path, options))

    try:
        found, why = stacks(model, structure)
    except AnalysisTimeout:
        raise
    except Exception as exc:  # a module the search did not foresee: trace it as always
        return Attempt(whole(), (), f"looking for repeated layers failed ({message_line(exc)})", whole)
    if not found:
        return Attempt(whole(), (), why[0] if why else None, whole)
    chosen = disjoint(found)
    try:
        with contextlib.ExitStack() as cm:
            lens = [cm.enter_context(shortened(st)) for st in chosen]
            exported, calls, route = loader.fake_export(model, inputs, path, options)
    except AnalysisTimeout:
        raise
    except Exception as exc:  # the shortened model does not export: trace it whole
        why = f"the model with {TRACED} layers of each of {_names(chosen)} does not trace ({message_line(exc)})"
        return Attempt(whole(), (), why, whole)
    read = [st.path or "the model" for st, n in zip(chosen, lens) if n]
    if read:
        return Attempt(whole(), (), f"forward() reads the number of layers of {read[0]} (len() or indexing)", whole)
    return Attempt(traced(exported, calls, route), chosen, None, whole)


def _names(chosen: Sequence[Stack]) -> str:
    return ", ".join(st.path or "the model" for st in chosen)


def finish(attempt: Attempt) -> Outcome:
    """The Outcome of an Attempt: a shortened trace lowered, optimised and stitched to each stack's
    N layers in turn (stitch.lower_shared, SharedTrace.at), or, where the stitch refuses, the whole
    model traced; a whole trace as it is (the caller lowers it)."""
    chosen = attempt.stacks
    if not chosen:
        return Outcome(None, attempt.traced, attempt.why and f"layers not shared: {attempt.why}")
    try:
        shared = lower_shared(attempt.traced, [st.path for st in chosen])
        program, stitched = shared.at([st.layers for st in chosen] if len(chosen) > 1 else chosen[0].layers)
    except AnalysisTimeout:
        raise
    except Exception as exc:  # NotShareable, or a lowering the short trace alone trips on
        why = str(exc) if isinstance(exc, NotShareable) else f"the shortened trace does not lower ({message_line(exc)})"
        return Outcome(None, attempt.whole(), f"layers not shared: {why}")
    parts = "; ".join(
        f"layers 2..{st.layers - 2} of {st.path or 'the model'} are copies of layer 1 (traced {TRACED} of {st.layers})"
        for st in chosen
    )
    return Outcome(program, stitched, f"layers shared: {parts}; identical modules")


def start_file(
    path: Any, mode: str | None = None, infer_structure: bool = False, options: TraceOptions = DEFAULT_OPTIONS
) -> Attempt:
    """`start` for a model file (built as loader.trace_file builds it)."""
    model, inputs, structure, spath = loader.build_file(path, mode, infer_structure)
    return start(model, inputs, spath, Path(path).stem, mode, structure, options)


def trace_file(
    path: Any, mode: str | None = None, infer_structure: bool = False, *, options: TraceOptions = DEFAULT_OPTIONS
) -> Outcome:
    """loader.trace_file, layers shared where they can be (unless `options` say not to)."""
    if not options.share_layers:
        return Outcome(None, loader.trace_file(path, mode, infer_structure, options=options), None)
    with standing_in():  # building, tracing and stitching run ops on the meta device
        return finish(start_file(path, mode, infer_structure, options))


def trace_module(
    model: torch.nn.Module, inputs: Sequence[Any], name: str | None = None, mode: str | None = None,
    infer_structure: bool = False, *, options: TraceOptions = DEFAULT_OPTIONS,
) -> Outcome:
    """loader.trace_module, layers shared where they can be (the module is left as it was; unless
    `options` say not to)."""
    if not options.share_layers:
        return Outcome(None, loader.trace_module(model, inputs, name, mode, infer_structure, options=options), None)
    structure = loader.module_structure(model, inputs, mode, infer_structure)
    return finish(start(model, loader.as_tuple(inputs), None, name or type(model).__name__, mode, structure, options))
