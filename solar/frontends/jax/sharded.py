"""Sharded JAX programs: a file whose function runs a `shard_map` (under `jit` or not), traced on
abstract devices (`jax.sharding.AbstractMesh`: no devices needed); rank 0's program is the
shard_map's body on per-shard shapes, its collectives over the mesh's axes."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from jax.extend.core import ClosedJaxpr

from solar.errors import UsageError
from solar.frontends.jax import convert, loader
from solar.frontends.jax.lowerings.collectives import MESH
from solar.frontends.loaded import Loaded, Provenance


def _find(jaxpr: Any) -> Any:
    """The first shard_map equation of `jaxpr`, looking into jit calls."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "shard_map":
            return eqn
        inner = eqn.params.get("jaxpr")
        if eqn.primitive.name in ("jit", "pjit") and inner is not None:
            found = _find(inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner)
            if found is not None:
                return found
    return None


def load_sharded(path: str | Path, world: int | None, mesh: str | None) -> tuple[Loaded, int]:
    """(rank 0's program, the number of ranks) of the JAX file at `path`."""
    traced = loader.trace_file(path)
    eqn = _find(traced.jaxpr.jaxpr)
    if eqn is None:
        raise UsageError(f"{Path(path).name}: no shard_map in the traced function; solar bounds JAX programs sharded with shard_map")
    abstract = eqn.params["mesh"]
    names, sizes = tuple(abstract.axis_names), tuple(abstract.axis_sizes)
    ranks = math.prod(sizes)
    given = mesh and tuple(int(p) for p in mesh.lower().split("x") if p.isdigit())
    if (world is not None and world != ranks) or (given and given != sizes):
        raise UsageError(
            f"{Path(path).name}: the file's mesh is {'x'.join(map(str, sizes))} ({ranks} ranks); "
            "drop --world-size / --mesh or give those"
        )
    body = eqn.params["jaxpr"]
    closed = body if isinstance(body, ClosedJaxpr) else ClosedJaxpr(body, [])
    outer = list(traced.jaxpr.jaxpr.invars)
    args = tuple(
        traced.args[outer.index(v)] if v in outer else loader.Arg("input", f"arg{k}")
        for k, v in enumerate(eqn.invars)
    )
    token = MESH.set((names, sizes))
    try:
        program = convert.convert(replace(traced, jaxpr=closed, args=args))[0]
    finally:
        MESH.reset(token)
    provenance = (Provenance("the shard_map body (rank 0)", "traced"),)
    note = f"JAX shard_map over mesh {dict(zip(names, sizes))}: rank 0's body on per-shard shapes"
    return Loaded(program, traced.flags, traced.source_file, None, (note,), provenance), ranks
