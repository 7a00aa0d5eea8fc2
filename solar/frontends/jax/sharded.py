"""Sharded JAX programs: a file whose function runs a `shard_map` (under `jit` or not), traced on
abstract devices (`jax.sharding.AbstractMesh`: no devices needed); rank 0's program is the
shard_map's body on per-shard shapes, its collectives over the mesh's axes. `solar verify` runs it
on simulated ranks against the file's single-device `reference`, shards cut as the specs say."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Literal

from solar.errors import UsageError
from solar.frontends import ranks, usercode
from solar.frontends.files import import_model_file
from solar.frontends.jax import convert, loader
from solar.frontends.jax.lowerings.collectives import MESH
from solar.frontends.loaded import Loaded, Provenance
from solar.ir.collectives import sharded_of


def _find(jaxpr: Any, position: dict | None = None) -> tuple[Any, list[int | None]]:
    """The first shard_map equation of `jaxpr`, looking into jit calls, and for each of its operands
    the position of the function's input it is (None: a value computed before the shard_map)."""
    position = {v: k for k, v in enumerate(jaxpr.invars)} if position is None else position
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "shard_map":
            return eqn, [None if isinstance(v, Literal) else position.get(v) for v in eqn.invars]
        inner = eqn.params.get("jaxpr")
        if eqn.primitive.name in ("jit", "pjit") and inner is not None:
            body = inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner
            within = {iv: position.get(v) for iv, v in zip(body.invars, eqn.invars) if not isinstance(v, Literal)}
            found = _find(body, {k: p for k, p in within.items() if p is not None})
            if found[0] is not None:
                return found
    return None, []


# XLA's partitioner picks the collectives of these constructs; solar does not run it (parameter of a
# jit equation, or a primitive -> what the user wrote)
PARTITIONED = (
    ("in_shardings", "jax.jit with in_shardings"),
    ("out_shardings", "jax.jit with out_shardings"),
    ("sharding_constraint", "jax.lax.with_sharding_constraint"),
)


def _partitioned(jaxpr: Any) -> tuple[str, Any, Any] | None:
    """(what the user wrote, its equation, the body of its jit) of the first construct of `jaxpr`
    (looking into jit calls) that XLA's partitioner shards, or None."""
    for eqn in jaxpr.eqns:
        inner = eqn.params.get("jaxpr")
        body = inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner
        for key, construct in PARTITIONED:
            given = eqn.params.get(key, ())
            if eqn.primitive.name == key or any(isinstance(g, jax.sharding.Sharding) for g in given):
                return construct, eqn, body
        if eqn.primitive.name in ("jit", "pjit") and body is not None and (found := _partitioned(body)):
            return found
    return None


def _user_line(eqn: Any, body: Any, source_file: str | None, key: str) -> str:
    """`file.py:LINE: code` of the user's line that wrote `eqn`: its own frame, else (a jit called
    from solar, as `forward`) the file's first line passing `key=`, else the jitted function's line."""
    frames = convert.user_frames(eqn, source_file)
    if not frames and source_file:
        text = Path(source_file).read_text(errors="replace").splitlines()
        at = next((k for k, line in enumerate(text, 1) if re.search(rf"\b{key}\s*=", line)), None)
        if at is not None:
            return f"{Path(source_file).name}:{at}: {text[at - 1].strip()}"
    if not frames and body is not None:
        frames = next((f for e in body.eqns if (f := convert.user_frames(e, source_file))), [])
    return convert.source_text(frames[0]) if frames else ""


def _no_shard_map(traced: Any, name: str) -> UsageError:
    """The error of a traced function without a shard_map: naming what partitions it, if anything."""
    found = _partitioned(traced.jaxpr.jaxpr)
    if found is None:
        return UsageError(f"{name}: no shard_map in the traced function; solar bounds JAX programs sharded with shard_map")
    construct, eqn, body = found
    key = construct.split()[-1].removeprefix("jax.lax.")
    line = _user_line(eqn, body, traced.source_file, key)
    return UsageError(
        f"{name}: {construct}{f' ({line})' if line else ''}: XLA's partitioner would choose its collectives, and "
        "solar does not run it; write the sharded part with jax.shard_map (its collectives are bounded per rank)"
    )


def _returns(jaxpr: Any, eqn: Any) -> bool:
    """Whether `jaxpr` returns exactly the results of the shard_map `eqn` (through jit calls)."""
    if list(jaxpr.outvars) == list(eqn.outvars):
        return True
    for e in jaxpr.eqns:
        inner = e.params.get("jaxpr")
        if e.primitive.name in ("jit", "pjit") and inner is not None and list(e.outvars) == list(jaxpr.outvars):
            return _returns(inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner, eqn)
    return False


def load_sharded(path: str | Path, world: int | None, mesh: str | None) -> tuple[Loaded, int]:
    """(rank 0's program, the number of ranks) of the JAX file at `path`."""
    loaded, sizes, *_ = _rank_program(loader.trace_file(path), Path(path).name, world, mesh)
    return loaded, math.prod(sizes)


def _rank_program(
    traced: Any, name: str, world: int | None, mesh: str | None
) -> tuple[Loaded, tuple[int, ...], Any, dict, tuple[str, ...], list[int | None]]:
    """(rank 0's program, the mesh's sizes, the shard_map equation, the program's input bindings
    (solar.frontends.jax.context.Binding, indices into the equation's operands), its outputs, the
    function input each operand is (see _find))."""
    eqn, inputs = _find(traced.jaxpr.jaxpr)
    if eqn is None:
        raise _no_shard_map(traced, name)
    abstract = eqn.params["mesh"]
    names, sizes = tuple(abstract.axis_names), tuple(abstract.axis_sizes)
    count = math.prod(sizes)
    given = mesh and tuple(int(p) for p in mesh.lower().split("x") if p.isdigit())
    if (world is not None and world != count) or (given and given != sizes):
        raise UsageError(
            f"{name}: the file's mesh is {'x'.join(map(str, sizes))} ({count} ranks); "
            "drop --world-size / --mesh or give those"
        )
    body = eqn.params["jaxpr"]
    closed = body if isinstance(body, ClosedJaxpr) else ClosedJaxpr(body, [])
    args = tuple(traced.args[p] if p is not None else loader.Arg("input", f"arg{k}") for k, p in enumerate(inputs))
    token = MESH.set((names, sizes))
    try:
        program, bindings, outputs = convert.convert(replace(traced, jaxpr=closed, args=args))
    finally:
        MESH.reset(token)
    provenance = (Provenance("the shard_map body (rank 0)", "traced"),)
    note = f"JAX shard_map over mesh {dict(zip(names, sizes))}: rank 0's body on per-shard shapes"
    loaded = Loaded(program, traced.flags, traced.source_file, None, (note,), provenance)
    return loaded, sizes, eqn, bindings, outputs, inputs


# ---- verify: the shard_map on simulated ranks against the file's single-device reference ---------


def _split(spec: Any, names: tuple[str, ...]) -> ranks.Split:
    """A PartitionSpec as the mesh axes each dimension is split over."""
    out = []
    for entry in tuple(spec):
        axes = () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)
        out.append(tuple(names.index(a) for a in axes))
    return tuple(out)


def _random(spec: Any, rng: np.random.Generator) -> np.ndarray:
    if jnp.issubdtype(spec.dtype, jnp.floating):
        return rng.standard_normal(spec.shape).astype(spec.dtype)
    if spec.dtype == jnp.bool_:
        return rng.random(spec.shape) > 0.5
    return rng.integers(0, 8, spec.shape).astype(spec.dtype)


def _host(x: Any) -> np.ndarray:
    """`x` as a numpy array the interpreter takes (a float of a narrow type as float32)."""
    a = np.asarray(x)
    return a.astype(np.float32) if jnp.issubdtype(a.dtype, jnp.floating) and a.dtype != np.float64 else a


def check_sharded_file(path: str | Path, world: int | None, mesh: str | None, seed: int = 0) -> ranks.ShardedCheck:
    """`solar verify FILE --world-size N`: the file's shard_map body run on its mesh's simulated
    ranks against `reference(*inputs)`, the function on one device (inputs: get_verify_inputs() or
    get_inputs(), random values); each rank's operands and results cut from the reference's by the
    shard_map's in_specs and out_specs."""
    name = Path(path).name
    module = import_model_file(path)
    for needed in ("forward", "reference"):
        if not callable(getattr(module, needed, None)):
            raise UsageError(
                f"{name}: defines no {needed}(*inputs); verify --world-size runs forward's shard_map on "
                "simulated ranks against reference, the same function on one device"
            )
    make = getattr(module, "get_verify_inputs", None) or getattr(module, "get_inputs", lambda: ())
    spath = str(Path(path).resolve())
    specs = loader.abstract(tuple(usercode.call(make, "get_inputs()", spath)), name)
    traced = loader.trace_callable(module.forward, specs, Path(path).stem, spath)
    loaded, sizes, eqn, bindings, outputs, inputs = _rank_program(traced, name, world, mesh)
    if not _returns(traced.jaxpr.jaxpr, eqn):
        raise UsageError(
            f"{name}: forward computes more than its shard_map; verify compares the shard_map's results "
            "with reference's, so return them as they are"
        )
    sharded = sharded_of(loaded.program, math.prod(sizes))
    ranks.check_budget(sharded, name)
    axes = tuple(eqn.params["mesh"].axis_names)
    rng = np.random.default_rng(seed)
    values = [_random(s, rng) for s in specs]
    result = usercode.call(module.reference, "reference(*inputs)", spath, *(jnp.asarray(v) for v in values))
    refs = [_host(r) for r in jax.tree_util.tree_leaves(result)]
    if len(refs) != len(outputs):
        raise UsageError(f"{name}: reference returns {len(refs)} arrays but the shard_map {len(outputs)}; return the same")
    program, n = loaded.program, sharded.world
    feeds: list[dict] = [{} for _ in range(n)]
    for tensor, b in bindings.items():
        if inputs[b.index] is None:
            raise UsageError(
                f"{name}: shard_map operand {b.index} is computed before the shard_map; verify needs the "
                "function's inputs passed straight in"
            )
        data = _host(values[inputs[b.index]])
        split = ranks.fitted(tensor, data, _split(eqn.params["in_specs"][b.index], axes), sizes, program.shape(tensor), name)
        for r in range(n):
            feeds[r][tensor] = ranks.shard(data, split, sizes, r).reshape(program.shape(tensor))
    expected: list[dict] = [{} for _ in range(n)]
    for k, tensor in enumerate(outputs):
        label = f"out{k}"
        split = ranks.fitted(label, refs[k], _split(eqn.params["out_specs"][k], axes), sizes, program.shape(tensor), name)
        for r in range(n):
            expected[r][tensor] = (label, ranks.shard(refs[k], split, sizes, r))
    return ranks.run_checks(name, sharded, sizes, feeds, expected)
