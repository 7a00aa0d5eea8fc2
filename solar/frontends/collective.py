"""Emitting a collective's local part into a program being built (every frontend's collectives):
the argument materialised as a tensor where it is a view, the result a fresh temp written by one
copy statement whose origin names the collective (solar.ir.collectives)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from solar.frontends.builder import ProgramBuilder, copy
from solar.frontends.views import View
from solar.ir.collectives import INPUT_PREFIX, Collective, Kind, local_part, origin_op
from solar.ir.dtypes import DType
from solar.ir.nodes import Load
from solar.ir.scalar_ops import Update


def emit_collective(
    b: ProgramBuilder, hint: str, kind: Kind, x: View, shape: Sequence[int], dtype: DType,
    groups: tuple[tuple[int, ...], ...], reduce: Update = Update.ADD, dim: int = 0, shift: int = 1,
) -> View:
    """The view of `kind(x)` over `groups` on this rank (its result of shape `shape`). A view argument
    is first copied into a tensor by a statement whose origin op is INPUT_PREFIX and the
    collective's, so the pricing knows both statements belong to the collective's kernel."""
    saved = b.origin
    op = origin_op(Collective(kind, "_", "_", groups, reduce, dim, shift))
    if x.base is not None and x.contiguous_of == x.base and x.dtype is dtype:
        arg = x
    else:
        b.origin = replace(saved, op=INPUT_PREFIX + op) if saved is not None else None
        arg = copy(b, f"{hint}_in", x, dtype)
    out = b.temp(hint, shape, dtype)
    c = Collective(kind, out.base, arg.base, groups, reduce, dim, shift)
    stmt = local_part(c, arg.shape)
    b.origin = replace(saved, op=op) if saved is not None else None
    b.emit(
        [(loop.var, loop.extent) for loop in stmt.loops], out.base, stmt.target.index, Update.ASSIGN,
        (((), Load(arg.base, stmt.value.index)),),
    )
    b.origin = saved
    return out


def mesh_groups(shape: Sequence[int], axes: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The groups of a device mesh of `shape` (ranks numbered row-major) whose members differ only
    along the mesh dimensions `axes`."""
    import itertools

    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    fixed = [d for d in range(len(shape)) if d not in axes]
    groups = []
    for outer in itertools.product(*(range(shape[d]) for d in fixed)):
        base = sum(i * strides[d] for i, d in zip(outer, fixed))
        members = [
            base + sum(i * strides[d] for i, d in zip(inner, axes))
            for inner in itertools.product(*(range(shape[d]) for d in axes))
        ]
        groups.append(tuple(sorted(members)))
    return tuple(groups)
