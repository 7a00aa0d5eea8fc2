"""The one JAX lowering table, keyed by primitive objects (`lax.dot_general_p`, ...).
`@lower(prim, ...)` registers a rule and refuses duplicates; the modules of this package fill the
table when it is imported.

A rule is called as `rule(ctx, *operands, **eqn.params)`: `ctx` is a LowerCtx (builder, output
shapes and dtypes, the converter for sub-jaxprs), operands are views (tensors), Python scalars
(literals) or affine index values, and it returns one value, or a list for primitives with several
results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Rule = Callable[..., Any]
LOWERINGS: dict[Any, Rule] = {}


def lower(*prims: Any) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for prim in prims:
            if prim in LOWERINGS:
                raise RuntimeError(f"duplicate lowering for JAX primitive {prim}")
            LOWERINGS[prim] = fn
        return fn

    return register
