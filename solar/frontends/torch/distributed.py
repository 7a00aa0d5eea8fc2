"""Sharded PyTorch programs: the file (or module) traced as rank 0 of a fake process group of the
world size the user gives (`torch.distributed`'s fake backend: collectives run on fake tensors,
no GPU, no peers), its collectives lowered to collective statements (lowerings/collectives.py)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from solar.errors import UsageError
from solar.frontends import ranks, usercode
from solar.frontends.files import import_model_file
from solar.frontends.torch import loader
from solar.frontends.torch.check import to_numpy
from solar.frontends.torch.convert import convert_returning
from solar.ir.collectives import sharded_of

MAX_WORLD = 1 << 16


def parse_mesh(text: str) -> tuple[int, ...]:
    """`2x4` -> (2, 4); a bad shape is one usage line."""
    parts = text.lower().split("x")
    if not all(p.isdigit() and 0 < len(p) <= 6 and int(p) > 0 for p in parts):
        raise UsageError(f"--mesh {text!r}: write the mesh shape as sizes joined by x, e.g. 2x4")
    return tuple(int(p) for p in parts)


def world_of(world_size: int | None, mesh: tuple[int, ...] | None) -> int:
    if mesh is not None:
        world = math.prod(mesh)
        if world_size is not None and world_size != world:
            raise UsageError(f"--world-size {world_size} differs from --mesh {'x'.join(map(str, mesh))} ({world} ranks)")
        world_size = world
    if world_size is None or not 1 <= world_size <= MAX_WORLD:
        raise UsageError(f"--world-size must be 1..{MAX_WORLD} (got {world_size})")
    return world_size


@functools.cache
def _dtensor_traceable() -> None:
    """DTensor's sharding spec as a pytree constant, so torch.export traces DTensor.from_local (the
    input hooks of parallelize_module's styles) and its decomposition turns the DTensor program
    into the local one with functional collectives."""
    import torch.utils._pytree as pytree
    from torch.distributed.tensor._dtensor_spec import DTensorSpec

    with contextlib.suppress(ValueError):  # registered already (by torch itself in a later version)
        pytree.register_constant(DTensorSpec)


@contextlib.contextmanager
def fake_world(world: int, mesh: tuple[int, ...] | None = None) -> Iterator[object | None]:
    """Within the block this process is rank 0 of `world` ranks on the fake backend (a default
    process group the traced code reaches as `dist.group.WORLD`); with `mesh`, a device mesh of that
    shape is made and yielded (`torch.distributed.device_mesh`)."""
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise UsageError("a torch.distributed process group is already initialised in this process")
    _dtensor_traceable()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    try:
        device_mesh = None
        if mesh is not None and len(mesh) > 1:
            from torch.distributed.device_mesh import init_device_mesh

            device_mesh = init_device_mesh("cpu", mesh)
        yield device_mesh
    finally:
        dist.destroy_process_group()


# ---- verify: the rank program on simulated ranks against the file without a process group ---------


@dataclass(frozen=True, slots=True)
class Cut:
    """How one of a file's tensors (SHARDS[name]) sits on the ranks: split along `dim` over mesh
    axis `axis` (None: over the whole mesh), or held whole by rank `holder` only (an output)."""

    dim: int | None = None
    axis: int | None = None
    holder: int | None = None


SHARDS_FORMS = "a dimension, (dimension, mesh axis), or for an output \"rank R\" (held by rank R only)"


def cuts_of(module: object, path: str, mesh: tuple[int, ...]) -> dict[str, Cut]:
    """The file's SHARDS as Cuts; a malformed entry is one usage line."""
    declared = getattr(module, "SHARDS", {})
    if not isinstance(declared, dict):
        raise UsageError(f"{path}: SHARDS must be a dict of name -> {SHARDS_FORMS}")
    world = math.prod(mesh)
    out = {}
    for name, value in declared.items():
        if isinstance(value, str) and re.fullmatch(r"rank \d{1,7}", value) and int(value[5:]) < world:
            out[name] = Cut(holder=int(value[5:]))
            continue
        pair = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        if (
            not isinstance(name, str) or not 1 <= len(pair) <= 2 or not all(type(v) is int for v in pair)
            or (len(pair) == 2 and not 0 <= pair[1] < len(mesh))
        ):
            raise UsageError(f"{path}: SHARDS[{name!r}] = {value!r}: give {SHARDS_FORMS}, with mesh axes 0..{len(mesh) - 1} "
                             f"and ranks 0..{world - 1}")
        out[name] = Cut(pair[0], pair[1] if len(pair) == 2 else None)
    return out


def _split(cut: Cut | None, name: str, ndim: int, mesh: tuple[int, ...], path: str) -> tuple[tuple[int, ...], ...]:
    split: list[tuple[int, ...]] = [()] * ndim
    if cut is None or cut.dim is None:
        return tuple(split)
    if not -ndim <= cut.dim < ndim:
        raise UsageError(f"{path}: SHARDS[{name!r}] splits dimension {cut.dim} but {name} has {ndim}")
    split[cut.dim % ndim] = tuple(range(len(mesh))) if cut.axis is None else (cut.axis,)
    return tuple(split)


def _placed(model: torch.nn.Module, shape: tuple[int, ...], path: str) -> dict[str, ranks.Split]:
    """The splits of the model's DTensor parameters and buffers (parallelize_module's), from their
    placements on a device mesh of the verified shape."""
    out = {}
    for label, t in [*model.named_parameters(), *model.named_buffers()]:
        placements = getattr(t, "placements", None)
        if placements is None:
            continue
        if tuple(t.device_mesh.mesh.shape) != shape:
            raise UsageError(
                f"{path}: {label} is a DTensor on a {list(t.device_mesh.mesh.shape)} mesh, not the verified "
                f"{list(shape)}; pass that --mesh"
            )
        split: list[tuple[int, ...]] = [()] * t.ndim
        for axis, p in enumerate(placements):
            if p.is_partial():
                raise UsageError(f"{path}: {label} is a partial sum on the mesh; verify compares whole or split tensors")
            if p.is_shard():
                split[p.dim] += (axis,)
        out[label] = tuple(split)
    return out


def _state_name(key: str) -> str:
    """A state key of the traced program as the module names it (torch.export unwraps a DTensor
    parameter `up.weight` into `up.parametrizations.weight.original0`)."""
    return key.replace("parametrizations.", "").removesuffix(".original0")


def check_sharded_file(
    path: str, world_size: int | None, mesh_text: str | None, seed: int = 0, mode: str | None = None
) -> ranks.ShardedCheck:
    """`solar verify FILE --world-size N`: the file's rank program (traced as rank 0 of a fake
    process group) run on `world` simulated ranks against the same file with no process group
    (the single-device original), each rank's tensors cut from the original's as SHARDS says (a
    DTensor's as its placements say)."""
    mesh = parse_mesh(mesh_text) if mesh_text else None
    world = world_of(world_size, mesh)
    shape = mesh or (world,)
    name = Path(path).name
    module = import_model_file(path)
    if not hasattr(module, "Model") or not hasattr(module, "get_inputs"):
        raise UsageError(f"{name}: a sharded PyTorch file defines class Model(nn.Module) and get_inputs()")
    spath = str(Path(path).resolve())
    init = getattr(module, "get_verify_init_inputs", None) or getattr(module, "get_init_inputs", list)
    make_inputs = getattr(module, "get_verify_inputs", None) or module.get_inputs
    cuts = cuts_of(module, name, shape)
    if dist.is_initialized():
        raise UsageError("a torch.distributed process group is already initialised in this process")
    torch.manual_seed(seed)
    with loader.on_cpu(), usercode.running(spath, "running the single-device original (no process group)"):
        original = module.Model(*init())
        loader.set_mode(original, mode)
        inputs = list(make_inputs())
        with torch.no_grad():
            result = original(*inputs)
    outs = [result] if isinstance(result, torch.Tensor) else [t for t in result if isinstance(t, torch.Tensor)]
    with fake_world(world, mesh if mesh and len(mesh) > 1 else None):
        with loader.on_cpu(), usercode.running(spath, f"building rank 0's Model of {world} ranks"):
            model = module.Model(*init())
            rank_inputs = list(make_inputs())
        placed = _placed(model, shape, name)
        traced = loader.trace_module(model, rank_inputs, name=getattr(module, "__name__", name), mode=mode)
        program, bindings, returned = convert_returning(traced)
        sharded = sharded_of(program, world)
    ranks.check_budget(sharded, name)
    params = list(inspect.signature(module.Model.forward).parameters)[1:]
    state = dict(original.named_parameters()) | dict(original.named_buffers())

    def full(binding: tuple[str, Any]) -> tuple[str, torch.Tensor]:
        kind, key = binding
        if kind == "input":
            label = params[key] if len(params) == len(inputs) and key < len(params) else f"input{key}"
            return label, inputs[key]
        key = _state_name(key)
        if key not in state:
            raise UsageError(f"{name}: the rank program reads {key}, which the single-device Model does not have")
        return key, state[key]

    feeds: list[dict] = [{} for _ in range(world)]
    for tensor, binding in bindings.items():
        label, value = full(binding)
        data = np.array(to_numpy(value), copy=True)
        if label in cuts and cuts[label].holder is not None:
            raise UsageError(f"{name}: SHARDS[{label!r}] = 'rank R' is for outputs; an input is split or whole on every rank")
        split = placed.get(label) or _split(cuts.get(label), label, data.ndim, shape, name)
        split = ranks.fitted(label, data, split, shape, program.shape(tensor), name)
        for r in range(world):
            feeds[r][tensor] = ranks.shard(data, split, shape, r).reshape(program.shape(tensor))
    expected: list[dict] = [{} for _ in range(world)]
    for ret in returned:
        if ret.kind != "output" or ret.tensor is None or ret.reordered:
            continue
        label = f"out{ret.position}"
        data = to_numpy(outs[ret.position])
        split = ranks.fitted(label, data, _split(cuts.get(label), label, data.ndim, shape, name), shape, program.shape(ret.tensor), name)
        holder = cuts[label].holder if label in cuts else None
        for r in range(world) if holder is None else (holder,):
            expected[r][ret.tensor] = (label, ranks.shard(data, split, shape, r))
    return ranks.run_checks(name, sharded, shape, feeds, expected)
