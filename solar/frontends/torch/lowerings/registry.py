"""The one PyTorch lowering table, keyed by OpOverload objects. `@lower(op, ...)` registers a rule
and refuses duplicates; the modules of this package fill the table when it is imported.

`@lower_library("namespace::name")` registers a rule for an op that a model library defines when
it is imported (transformers' MoE fallback): `resolve_library()` puts it into the table, keyed by
the real op object, once the library has defined it (the converter calls it before lowering)."""

from __future__ import annotations

from typing import Any, Callable

Rule = Callable[..., Any]
LOWERINGS: dict[Any, Rule] = {}
LIBRARY: dict[str, Rule] = {}  # "namespace::name" -> rule of an op a library defines on import
LIBRARY_NOTES: dict[str, str] = {}  # "namespace::name" -> its assumption line
NOTES: dict[Any, str] = {}  # the assumption lines of the library ops resolved so far


def lower(*ops: Any) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for op in ops:
            if op in LOWERINGS:
                raise RuntimeError(f"duplicate lowering for {op}")
            LOWERINGS[op] = fn
        return fn

    return register


def lower_library(*qualnames: str, note: str = "") -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for name in qualnames:
            if name in LIBRARY:
                raise RuntimeError(f"duplicate lowering for {name}")
            LIBRARY[name] = fn
            if note:
                LIBRARY_NOTES[name] = note
        return fn

    return register


def resolve_library() -> None:
    """Key the rules of library ops whose library has defined them by now by their op objects."""
    import torch

    for qualname, fn in LIBRARY.items():
        namespace, name = qualname.split("::")
        try:
            op = getattr(getattr(torch.ops, namespace), name).default
        except (AttributeError, RuntimeError):
            continue  # the library is not imported (or defines no such op)
        LOWERINGS.setdefault(op, fn)
        if qualname in LIBRARY_NOTES:
            NOTES.setdefault(op, LIBRARY_NOTES[qualname])
