"""The PyTorch lowering table: one rule per core-ATen OpOverload. Every module of this package
registers its rules with `registry.lower`; importing the package imports them all, so a new family
of ops is a new module here and nothing else. A module may also define tables the tracer and the
checks read (PRESERVE, REDIRECT, REDIRECT_DIRECT, NOTES, UNSUPPORTED, RANDOM_OPS, CHECK_*): the
functions below gather them."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Any

import torch

from solar.frontends.torch.lowerings.registry import LOWERINGS, lower

MODULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(f"{__name__}.{info.name}")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
)


def tables(attr: str) -> list[Any]:
    """`attr` of every lowering module that defines it, in module-name order."""
    return [getattr(m, attr) for m in MODULES if hasattr(m, attr)]


def merged(attr: str) -> dict:
    """The union of the `attr` tables of the lowering modules (op -> value)."""
    out: dict = {}
    for table in tables(attr):
        out.update(table)
    return out


def op_notes(graph: torch.fx.Graph) -> list[str]:
    """Assumption lines of the ops a graph uses (the NOTES tables: how data-dependent and random
    ops are priced), each line once, in program order."""
    table = merged("NOTES")
    lines: dict[str, None] = {}
    for node in graph.nodes:
        line = table.get(node.target) if node.op == "call_function" else None
        if line:
            lines.setdefault(line)
    return list(lines)


def preserved_ops() -> frozenset:
    """The union of the PRESERVE sets: ops lowered whole, never decomposed."""
    return frozenset().union(*tables("PRESERVE"))


def redirects(direct: bool = False) -> dict[Any, Any]:
    """torch functions routed to custom ops while tracing (the REDIRECT tables, and with `direct`
    the REDIRECT_DIRECT tables, whose ops only the direct lowering reads): the custom ops have
    cheap fake implementations and are kept whole by export."""
    return {**merged("REDIRECT"), **(merged("REDIRECT_DIRECT") if direct else {})}


def direct_only_ops() -> frozenset:
    """The custom ops of the REDIRECT_DIRECT tables."""
    return frozenset(merged("REDIRECT_DIRECT").values())


def unsupported_reasons() -> dict[Any, str]:
    """Ops known to be unsupported, with the reason (the UNSUPPORTED tables)."""
    return merged("UNSUPPORTED")


def random_ops() -> frozenset:
    """Ops whose outputs are random draws (the RANDOM_OPS sets): never compared element by element."""
    return frozenset().union(*tables("RANDOM_OPS"))


__all__ = [
    "LOWERINGS", "MODULES", "direct_only_ops", "lower", "merged", "op_notes", "preserved_ops",
    "random_ops", "redirects", "tables", "unsupported_reasons",
]
