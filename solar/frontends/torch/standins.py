"""Stand-ins for three modules that analysing a program touches but never needs: `torch._dynamo`,
`torch.fx.experimental.symbolic_shapes` and `sympy`, which together cost about as much CPU as
importing torch itself.

Running an op on meta tensors goes through torch's Python reference kernels, each wrapped by
`torch._disable_dynamo`, whose first call imports all of dynamo (and with it inductor, FSDP, ONNX,
sympy) only to wrap the kernel in `torch._dynamo.disable`; `torch._check` imports symbolic_shapes
for `expect_true` of a plain bool, as broadcasting does for `guard_or_false` and the hints of plain
ints; and type promotion imports sympy to ask whether a value is a sympy expression. Nothing
solar's analysis runs is compiled, so `disable(fn)` is `fn` itself; symbolic_shapes' answers for
plain values are the values (PLAIN_SYMBOLIC); and nothing is a sympy expression before sympy is
imported (SympyBasic). `standing_in()` installs a module in place of each that answers so, and that
turns into the real module the moment anything else is asked of it (any other attribute or
submodule, a symbolic value): the real package is imported (in its own order), and every function
the dynamo stand-in let through is handed back to torch's lazy wrapper (its cached
`__dynamo_disable` removed), so that from then on torch behaves exactly as without the stand-ins.
Leaving the block does the same for what is still standing in."""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch

DYNAMO = "torch._dynamo"
SYMBOLIC_SHAPES = "torch.fx.experimental.symbolic_shapes"
SYMPY = "sympy"


class _Real(Exception):
    """A stand-in cannot answer: the real module answers instead."""


class StandIn(types.ModuleType):
    """A module standing in for `name`: answers `calls` (functions that raise _Real where the
    real module must answer) and holds `values`; the real module for anything else."""

    def __init__(
        self, name: str, calls: dict[str, Callable[..., Any]], on_real: Callable[[], None], values: dict[str, Any]
    ) -> None:
        super().__init__(name)
        self._on_real = on_real
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            self.__path__ = list(spec.submodule_search_locations)
        for attr, fn in calls.items():
            setattr(self, attr, self._answer(fn))
        for attr, value in values.items():
            setattr(self, attr, value)

    def _answer(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            if sys.modules.get(self.__name__) is self:  # (a reference kept past the stand-in asks the real one)
                try:
                    return fn(*args, **kwargs)
                except _Real:
                    pass
            return getattr(self._real(), fn.__name__)(*args, **kwargs)

        call.__name__ = fn.__name__
        return call

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        real = self._real()
        if not hasattr(real, attr) and hasattr(real, "__path__"):  # a submodule its package does not import
            return importlib.import_module(f"{self.__name__}.{attr}")
        return getattr(real, attr)

    def _real(self) -> types.ModuleType:
        _remove(self)
        self._on_real()
        return importlib.import_module(self.__name__)


class _Existing(importlib.abc.Loader):
    """Hands the import system a module that is already in sys.modules."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return sys.modules[spec.name]

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class Submodules(importlib.abc.MetaPathFinder):
    """A submodule of a module stood in for is imported from the real package: the package first
    (in its own order: its modules import one another), then the submodule if it did not."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        parent = sys.modules.get(name.rpartition(".")[0])
        if not isinstance(parent, StandIn):
            return None
        parent._real()
        if name in sys.modules:
            return importlib.util.spec_from_loader(name, _Existing())
        return None


_SUBMODULES = Submodules()


def _remove(stand_in: StandIn) -> None:
    """Takes a stand-in out of sys.modules and off its parent package (where it still is)."""
    name = stand_in.__name__
    if sys.modules.get(name) is stand_in:
        del sys.modules[name]
    parent, _, child = name.rpartition(".")
    holder = sys.modules.get(parent) if parent else None
    if holder is not None and vars(holder).get(child) is stand_in:
        delattr(holder, child)


def _install(stand_in: StandIn) -> bool:
    name = stand_in.__name__
    if name in sys.modules:
        return False
    parent, _, child = name.rpartition(".")
    sys.modules[name] = stand_in
    if parent:
        importlib.import_module(parent)
        setattr(sys.modules[parent], child, stand_in)
    return True


class _Disabled:
    """The functions `disable` let through, to hand back to torch's lazy wrapper."""

    def __init__(self) -> None:
        self.functions: list[Any] = []

    def disable(self, fn: Any = None, recursive: bool = True, *, wrapping: bool = True, reason: Any = None) -> Any:
        if fn is None or not callable(fn):
            raise _Real
        self.functions.append(fn)
        return fn

    def hand_back(self) -> None:
        for fn in self.functions:
            if vars(fn).get("__dynamo_disable") is fn:  # (a string: no name mangling in the class)
                delattr(fn, "__dynamo_disable")
        self.functions.clear()


def _on_plain(name: str, kinds: tuple[type, ...], answer: Callable[[Any], Any]) -> Callable[..., Any]:
    """symbolic_shapes' `name` where its first argument is a plain Python value of `kinds`."""

    def call(a: Any, *_: Any, **__: Any) -> Any:
        if type(a) not in kinds:
            raise _Real
        return answer(a)

    call.__name__ = name
    return call


def _itself(a: Any) -> Any:
    return a


def _plain_args(name: str, kinds: tuple[type, ...], answer: Callable[..., Any]) -> Callable[..., Any]:
    """symbolic_shapes' `name` where every argument is a plain value of `kinds` (or a tuple, list
    or torch.Size of them)."""

    def plain(a: Any) -> bool:
        return type(a) in kinds or (type(a) in (tuple, list, torch.Size) and all(type(x) in kinds for x in a))

    def call(*args: Any) -> Any:
        if not all(plain(a) for a in args):
            raise _Real
        return answer(*args)

    call.__name__ = name
    return call


# What symbolic_shapes answers for plain values (no symbol, no shape environment), as it is
# written there: a plain bool is its own truth, guard and hint; a plain int its own hint, and
# never a nested int.
PLAIN_SYMBOLIC: tuple[tuple[str, tuple[type, ...], Callable[[Any], Any]], ...] = (
    ("expect_true", (bool,), _itself),
    ("guard_bool", (bool,), _itself),
    ("guard_or_false", (bool,), _itself),
    ("guard_or_true", (bool,), _itself),
    ("statically_known_true", (bool,), _itself),
    ("guard_int", (int,), _itself),
    ("guarding_hint_or_throw", (bool, int), _itself),
    ("has_guarding_hint", (bool, int, float), lambda a: True),
    ("is_nested_int", (int, float), lambda a: False),
    ("guard_size_oblivious", (bool,), _itself),
    ("cast_symbool_to_symint_guardless", (bool,), int),
    ("has_free_symbols", (bool, int, float), lambda a: False),
)
# ... and of functions of several plain values.
PLAIN_SYMBOLIC_ARGS: tuple[tuple[str, tuple[type, ...], Callable[..., Any]], ...] = (
    ("sym_and", (bool,), lambda x, *others: all((x, *others))),
    ("sym_or", (bool,), lambda x, *others: any((x, *others))),
    ("sym_eq", (int,), lambda x, y: x == y if type(x) is int else tuple(x) == tuple(y)),
)


class _RealBasic(type):
    """isinstance and issubclass against sympy.Basic where sympy is imported; else False (no
    sympy object can exist before sympy is imported)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        real = sys.modules.get(SYMPY)
        return real is not None and not isinstance(real, StandIn) and isinstance(obj, real.Basic)

    def __subclasscheck__(cls, sub: type) -> bool:
        real = sys.modules.get(SYMPY)
        return real is not None and not isinstance(real, StandIn) and issubclass(sub, real.Basic)


class SympyBasic(metaclass=_RealBasic):
    """What the sympy stand-in answers for `sympy.Basic`: torch's type promotion imports sympy
    only to ask whether a value is a sympy expression."""


@contextlib.contextmanager
def standing_in() -> Iterator[None]:
    """torch._dynamo, symbolic_shapes and sympy stood in for (where not already imported) while
    the block runs; see the module docstring."""
    disabled = _Disabled()
    calls = {
        DYNAMO: ({"disable": disabled.disable}, disabled.hand_back, {}),
        SYMBOLIC_SHAPES: (
            {name: _on_plain(name, kinds, answer) for name, kinds, answer in PLAIN_SYMBOLIC}
            | {name: _plain_args(name, kinds, answer) for name, kinds, answer in PLAIN_SYMBOLIC_ARGS},
            lambda: None,
            {name: getattr(torch, name) for name in ("SymBool", "SymFloat", "SymInt")},  # (torch's own, re-exported)
        ),
        SYMPY: ({}, lambda: None, {"Basic": SympyBasic}),
    }
    installed = [s for s in (StandIn(name, *c) for name, c in calls.items() if name not in sys.modules) if _install(s)]
    finder = bool(installed) and _SUBMODULES not in sys.meta_path
    if finder:
        sys.meta_path.insert(0, _SUBMODULES)
    try:
        yield
    finally:
        if finder:
            sys.meta_path.remove(_SUBMODULES)
        for stand_in in installed:
            _remove(stand_in)
        disabled.hand_back()


def stood_in(name: str) -> bool:
    """Whether `name` is a stand-in now (not imported for real)."""
    return isinstance(sys.modules.get(name), StandIn)

