"""The JAX lowering table: one rule per primitive. Every module of this package registers its rules
with `registry.lower`; importing the package imports them all, so a new family of primitives is a
new module here and nothing else."""

from __future__ import annotations

import importlib
import pkgutil

from solar.frontends.jax.lowerings.registry import LOWERINGS, lower

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name != "registry":
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["LOWERINGS", "lower"]
