"""Sharded PyTorch programs: the file (or module) traced as rank 0 of a fake process group of the
world size the user gives (`torch.distributed`'s fake backend: collectives run on fake tensors,
no GPU, no peers), its collectives lowered to collective statements (lowerings/collectives.py)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import torch.distributed as dist

from solar.errors import UsageError

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


@contextlib.contextmanager
def fake_world(world: int, mesh: tuple[int, ...] | None = None) -> Iterator[object | None]:
    """Within the block this process is rank 0 of `world` ranks on the fake backend (a default
    process group the traced code reaches as `dist.group.WORLD`); with `mesh`, a device mesh of that
    shape is made and yielded (`torch.distributed.device_mesh`)."""
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise UsageError("a torch.distributed process group is already initialised in this process")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    try:
        device_mesh = None
        if mesh is not None and len(mesh) > 1:
            from torch.distributed.device_mesh import init_device_mesh

            device_mesh = init_device_mesh("cpu", mesh)
        yield device_mesh
    finally:
        dist.destroy_process_group()
