"""A scope in which the objects alive on entry are left out of the cyclic garbage collector's scans.

Each stage of an analysis (lowering, passes, lifting, bounding) allocates hundreds of thousands of
small frozen nodes, so CPython runs a full collection every few hundred thousand allocations; each
full collection walks every tracked object of the process, most of them torch's modules and the
traced graph, which the stage does not free. On KernelBench DenseNet-201 those walks were about a
quarter of the time after tracing. `settled()` moves the objects alive on entry to the permanent
generation (`gc.freeze`) and back on exit (`gc.unfreeze`): they are still freed by reference
counting, and are scanned again after the scope, so nothing is kept alive longer. Nested scopes
freeze once; a process that froze objects itself (a forking server) is left as it is.
`collection_paused()` stops the collector for a block that builds one large acyclic structure;
`promote_all()` moves what such a block made to the oldest generation without a scan."""

from __future__ import annotations

import functools
import gc
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

__all__ = ["collection_paused", "promote_all", "settled", "settled_heap"]

F = TypeVar("F", bound=Callable)
_depth = 0


@contextmanager
def settled_heap() -> Iterator[None]:
    global _depth
    owner = _depth == 0 and gc.get_freeze_count() == 0
    if owner:
        gc.freeze()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if owner:
            gc.unfreeze()


def settled(fn: F) -> F:
    """`fn` run inside `settled_heap()`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with settled_heap():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic collection while the block runs: for a block that builds one large structure
    without cycles (a parse tree of thousands of statements), which every full collection would
    walk again, so that the collections grew faster than the structure. Reference counting still
    frees what the block drops; the collector runs again after it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def promote_all() -> None:
    """Move every object alive to the oldest generation without scanning it (`gc.freeze`, then
    `gc.unfreeze`): for the end of a block run with the collector paused that made many objects
    which live on (the imports of torch), which the first young collection after it would otherwise
    walk all at once. A process that froze objects itself is left as it is."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
