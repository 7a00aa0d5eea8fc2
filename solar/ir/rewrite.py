"""Rebuilding an IR tree with some of its nodes replaced: a generic walk over the frozen
dataclasses and tuples the IR is made of (used by the LLM frontend's size binding and by the
symbolic tracer's integer leaves)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


def rewrite(node: Any, fn: Callable[[Any], Any]) -> Any:
    """Rebuild a tree of frozen dataclasses and tuples top-down, replacing every node for which
    `fn` returns something other than None (that replacement is not walked further). Works for
    every IR node type, including ones added later, since it walks dataclass fields generically."""
    out = fn(node)
    if out is not None:
        return out
    return rewrite_children(node, fn)


def rewrite_children(node: Any, fn: Callable[[Any], Any]) -> Any:
    """`node` with each child (tuple item or init field) rewritten by `rewrite(child, fn)`; the
    node itself when no child changed."""
    if isinstance(node, tuple):
        return tuple(rewrite(x, fn) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in dataclasses.fields(node):
            if not f.init:
                continue
            old = getattr(node, f.name)
            new = rewrite(old, fn)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node
    return node
