"""The primitive objects the lowering table is keyed by: JAX's public `jax.extend.core.primitives`,
completed from `jax.lax` for the few it does not re-export (split_p, optimization_barrier_p)."""

from __future__ import annotations

from types import SimpleNamespace

from jax import lax
from jax.extend.core import Primitive
from jax.extend.core import primitives as _public
from jax.interpreters import mlir

P = SimpleNamespace(
    **{
        **{n: getattr(lax, n) for n in dir(lax) if n.endswith("_p")},
        **{n: getattr(_public, n) for n in dir(_public) if n.endswith("_p")},
    }
)

# Primitives of newer JAX releases than the one installed (JAX 0.11 differentiates tanh through
# `one_minus_square`). Where the installed JAX lacks one, a stand-in of the same name keys its rule,
# and equations are matched to it by name (NEWER_BY_NAME); where it has one, the real object is used.
# Each stand-in is elementwise: its value function is its implementation and its JAX lowering.
NEWER = {"one_minus_square": lambda x: 1 - x * x}
NEWER_BY_NAME: dict[str, Primitive] = {}
for _name, _value in NEWER.items():
    _prim = getattr(P, f"{_name}_p", None)
    if _prim is None:
        _prim = Primitive(_name)
        _prim.def_impl(_value)
        _prim.def_abstract_eval(lambda x: x)
        mlir.register_lowering(_prim, mlir.lower_fun(_value, multiple_results=False))
        setattr(P, f"{_name}_p", _prim)
    NEWER_BY_NAME[_name] = _prim

__all__ = ["NEWER_BY_NAME", "P"]
