"""Primitives that appear in the jaxprs of gradients (jax.grad / value_and_grad): add_any, the sum
of two cotangents (an element-wise addition)."""

from __future__ import annotations

from typing import Any

from solar.frontends.builder import add, elementwise
from solar.frontends.jax.context import IndexValue, LowerCtx, as_view
from solar.frontends.jax.lowerings.registry import lower
from solar.frontends.jax.primitives import P
from solar.frontends.views import View


@lower(P.add_jaxvals_p)
def _add_any(ctx: LowerCtx, x: Any, y: Any) -> View:
    ins = [as_view(v) if isinstance(v, IndexValue) else v for v in (x, y)]
    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, ins, add)
