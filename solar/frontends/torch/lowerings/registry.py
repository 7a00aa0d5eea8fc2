"""The one PyTorch lowering table, keyed by OpOverload objects. `@lower(op, ...)` registers a rule
and refuses duplicates; the modules of this package fill the table when it is imported."""

from __future__ import annotations

from typing import Any, Callable

Rule = Callable[..., Any]
LOWERINGS: dict[Any, Rule] = {}


def lower(*ops: Any) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for op in ops:
            if op in LOWERINGS:
                raise RuntimeError(f"duplicate lowering for {op}")
            LOWERINGS[op] = fn
        return fn

    return register
