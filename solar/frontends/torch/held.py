"""Tensors a model reaches through plain Python objects (a transformers cache kept as an attribute
or passed to forward(), a dataclass, a namespace, `__slots__`, containers, objects in cycles): found
by walking instance storage only (no property is evaluated), with the places that hold them."""

from __future__ import annotations

import collections
import enum
import re
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import torch

# Values that hold no instance storage worth walking (and are copied or shared as they are).
_ATOMS = (
    str, bytes, bytearray, int, float, complex, bool, type(None), enum.Enum, type, range, slice,
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
    types.MethodWrapperType, types.WrapperDescriptorType, property, staticmethod, classmethod,
    torch.dtype, torch.device, torch.layout, torch.memory_format, torch.Size,
)
# Containers whose items are walked (a tuple's items are rebound by rebuilding the tuple).
_SEQUENCES = (list, tuple, collections.deque)
# Module internals the module machinery already accounts for (parameters, buffers, submodules).
_MODULE_STATE = frozenset({"_parameters", "_buffers", "_modules"})


@dataclass(frozen=True)
class Step:
    """One hop from an object to a value it holds: `kind` "attr" (an entry of the instance
    `__dict__`), "slot" (a `__slots__` member, read through the declaring class's descriptor) or
    "item" (an item of a list, tuple, deque or dict)."""

    kind: str
    key: Any
    owner: type | None = None  # the class declaring a slot

    def text(self) -> str:
        return f"[{self.key!r}]" if self.kind == "item" else f".{self.key}"

    def get(self, obj: Any) -> Any:
        if self.kind == "attr":
            return object.__getattribute__(obj, "__dict__")[self.key]
        if self.kind == "slot":
            return vars(self.owner)[self.key].__get__(obj, type(obj))
        return obj[self.key]

    def put(self, obj: Any, value: Any) -> None:
        """Store `value` in place of the held one (not for a tuple: see `Binding`)."""
        if self.kind == "attr":
            object.__getattribute__(obj, "__dict__")[self.key] = value
        elif self.kind == "slot":
            vars(self.owner)[self.key].__set__(obj, value)
        else:
            obj[self.key] = value


@dataclass(frozen=True)
class Place:
    """Where a value sits: `parent` holds it at `step`; `path` names it for a user
    (`model.cache.layers[3].keys`); `plain` is whether only lists, tuples and dicts lead to it from
    a module attribute (such tensors stay shared constants, see solar.frontends.torch.fake)."""

    parent: Any
    step: Step
    path: str
    plain: bool


@dataclass
class Walk:
    """What a walk found: every place holding a tensor (a tensor held in two places is listed
    twice), the first place of every object walked (`origin`, by id), and the objects with no
    instance storage to read (`opaque`: a lock, a stream, a generator)."""

    tensors: list[tuple[Place, torch.Tensor]]
    origin: dict[int, Place]
    opaque: list[Any]


def is_state_object(x: Any) -> bool:
    """An object passed to forward() that holds state solar walks (a cache, a dataclass, a
    namespace): one with instance storage, neither a tensor, a container, a module nor a number."""
    if isinstance(x, (torch.Tensor, torch.nn.Module, dict, list, tuple, set, frozenset, *_ATOMS)):
        return False
    return _storage(x) is not None


def module_roots(model: torch.nn.Module, skip_tensors: bool = True) -> list[tuple[Place, Any]]:
    """Each module attribute that is neither a parameter, a buffer nor a submodule (nor, with
    `skip_tensors`, a tensor: solar.frontends.torch.fake.tensor_attributes), at its place."""
    roots = []
    for prefix, mod in model.named_modules():
        base = f"model.{prefix}" if prefix else "model"
        for attr, value in vars(mod).items():
            if attr in _MODULE_STATE or isinstance(value, _ATOMS):
                continue
            if skip_tensors and isinstance(value, torch.Tensor):
                continue
            roots.append((Place(mod, Step("attr", attr), f"{base}.{attr}", True), value))
    return roots


def argument_roots(holder: list) -> list[tuple[Place, Any]]:
    """The state objects among forward()'s positional arguments (`holder`), at their places."""
    return [
        (Place(holder, Step("item", k), f"args[{k}]", False), x)
        for k, x in enumerate(holder) if is_state_object(x)
    ]


def walk(roots: Sequence[tuple[Place, Any]], skip: set[int]) -> Walk:
    """Every tensor reachable from `roots` through instance storage, containers and slots; objects
    whose id is in `skip` (the model's registered modules) are not entered, and each object is
    entered once (cycles)."""
    found = Walk([], {}, [])
    seen: set[int] = set(skip)
    stack = list(reversed(roots))
    while stack:
        place, value = stack.pop()
        if isinstance(value, torch.Tensor):
            found.tensors.append((place, value))
            continue
        if isinstance(value, _ATOMS) or id(value) in seen:
            continue
        seen.add(id(value))
        found.origin[id(value)] = place
        kids = children(value)
        if kids is None:
            found.opaque.append(value)
            continue
        plain = place.plain and isinstance(value, (dict, *_SEQUENCES))
        stack.extend(
            (Place(value, step, place.path + step.text(), plain), child)
            for step, child in reversed(kids)
        )
    return found


def children(obj: Any) -> list[tuple[Step, Any]] | None:
    """The values `obj` holds, by step (None: an object with no storage solar can read)."""
    kids: list[tuple[Step, Any]] = []
    if isinstance(obj, dict):
        kids += [(Step("item", k), v) for k, v in list(obj.items())]
    elif isinstance(obj, _SEQUENCES):
        kids += [(Step("item", k), v) for k, v in enumerate(list(obj))]
    storage = _storage(obj)
    if storage is None:
        return kids if isinstance(obj, (dict, *_SEQUENCES)) else None
    return kids + storage


def _storage(obj: Any) -> list[tuple[Step, Any]] | None:
    """The instance `__dict__` entries and set slots of `obj`, read without evaluating any
    property (None: it has neither)."""
    out: list[tuple[Step, Any]] = []
    has = False
    try:
        own = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        own = None
    if isinstance(own, dict):
        has = True
        out += [(Step("attr", k), v) for k, v in list(own.items())]
    for cls in type(obj).__mro__:
        for name in _slot_names(cls):
            has = True
            descriptor = vars(cls).get(name)
            if not isinstance(descriptor, types.MemberDescriptorType):
                continue
            try:
                out.append((Step("slot", name, cls), descriptor.__get__(obj, type(obj))))
            except AttributeError:  # an unset slot
                continue
    return out if has else None


def _slot_names(cls: type) -> Iterator[str]:
    names = vars(cls).get("__slots__", ())
    for name in (names,) if isinstance(names, str) else names:
        if name in ("__dict__", "__weakref__"):
            continue
        private = name.startswith("__") and not name.endswith("__")
        yield f"_{cls.__name__.lstrip('_')}{name}" if private else name


# ---- names and rebinding ----------------------------------------------------------------------


def buffer_name(path: str, taken: Callable[[str], bool]) -> str:
    """A module attribute name for the tensor at `path` (`model.cache.layers[3].keys` ->
    `cache_layers_3_keys`), made unique against `taken`."""
    base = re.sub(r"\W+", "_", path.removeprefix("model.")).strip("_") or "held"
    name, k = base, 1
    while taken(name):
        k += 1
        name = f"{base}_{k}"
    return name


def held_names(model: torch.nn.Module, found: Walk, state: dict[int, str]) -> list[tuple[str, torch.Tensor]]:
    """The buffer each held tensor (not plain, not already a parameter, buffer or tensor
    attribute, i.e. not in `state`, and not empty: see `Binding`) is registered as on the copy:
    (name, tensor), one per tensor, in walk order (so that the original and the copy name them
    alike)."""
    names: dict[int, str] = {}
    out = []

    def taken(name: str) -> bool:
        return name in vars(model) or hasattr(type(model), name) or name in model._buffers \
            or name in model._parameters or name in model._modules or name in names.values()

    for place, t in found.tensors:
        if place.plain or id(t) in state or id(t) in names or t.numel() == 0:
            continue
        names[id(t)] = buffer_name(place.path, taken)
        out.append((names[id(t)], t))
    return out


@dataclass(frozen=True)
class Binding:
    """How a copy's held tensors are rebound at each call of forward(): every place holding one
    reads, at that moment, the copy's parameter or buffer `sources[k]` (the tensor torch.export
    tracks), or, for an empty tensor (no data, and no buffer a program may hold), a fresh empty
    tensor of its shape and dtype; and gets its value back after the call."""

    places: tuple[Place, ...]
    sources: tuple[str | tuple[torch.Size, torch.dtype], ...]
    origin: dict[int, Place]

    def bind(self, model: torch.nn.Module) -> list[tuple[Any, Step, Any]]:
        undo: list[tuple[Any, Step, Any]] = []
        fresh: dict[int, tuple] = {}
        for place, source in zip(self.places, self.sources):
            self._put(place, _resolve(model, source), fresh, undo)
        return undo

    def _put(self, place: Place, value: Any, fresh: dict[int, tuple], undo: list) -> None:
        parent = fresh.get(id(place.parent), place.parent)
        if isinstance(parent, tuple):  # immutable: rebuilt, and the rebuilt one put in its place
            items = list(parent)
            items[place.step.key] = value
            fresh[id(place.parent)] = _remake(parent, items)
            self._put(self.origin[id(place.parent)], fresh[id(place.parent)], fresh, undo)
            return
        undo.append((parent, place.step, place.step.get(parent)))
        place.step.put(parent, value)

    @staticmethod
    def restore(undo: Iterable[tuple[Any, Step, Any]]) -> None:
        for parent, step, value in reversed(list(undo)):
            step.put(parent, value)


def _remake(t: tuple, items: list) -> tuple:
    make = getattr(type(t), "_make", None)  # a namedtuple
    return make(items) if make is not None else type(t)(items)


def _resolve(model: torch.nn.Module, name: str | tuple[torch.Size, torch.dtype]) -> Any:
    if isinstance(name, tuple):
        return torch.empty(name[0], dtype=name[1])
    obj: Any = model
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj
