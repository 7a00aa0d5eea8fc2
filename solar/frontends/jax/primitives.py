"""The primitive objects the lowering table is keyed by: JAX's public `jax.extend.core.primitives`,
completed from `jax.lax` for the few it does not re-export (split_p, optimization_barrier_p)."""

from __future__ import annotations

from types import SimpleNamespace

from jax import lax
from jax.extend.core import primitives as _public

P = SimpleNamespace(
    **{
        **{n: getattr(lax, n) for n in dir(lax) if n.endswith("_p")},
        **{n: getattr(_public, n) for n in dir(_public) if n.endswith("_p")},
    }
)

__all__ = ["P"]
