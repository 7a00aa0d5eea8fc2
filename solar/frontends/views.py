"""Lazy tensor views: a shape, a dtype and an index map from the view's index to guarded
alternatives of IR expressions. View ops (reshape, permute, expand, slice, select, cat, repeat, ...)
compose index maps and never copy; a consumer statement reads the base tensors directly.

An alternative is `(guards, expr)`: where the guards hold, the element is `expr`. Most views have a
single unguarded alternative; `cat` has one alternative per piece, guarded by the piece's range, and
the statement builder splits a consumer into one statement per feasible combination."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Callable, Sequence

from solar.errors import SolarError
from solar.ir.affine import Affine, Constraint, ge, lt
from solar.ir.dtypes import DType
from solar.ir.nodes import Const, Expr, Load

Index = tuple[Affine, ...]
Alt = tuple[tuple[Constraint, ...], Expr]
IndexMap = Callable[[Index], tuple[Alt, ...]]


@dataclass(frozen=True)
class View:
    shape: tuple[int, ...]
    dtype: DType
    at: IndexMap
    base: str | None = None  # the materialised tensor when this view is exactly that tensor
    contiguous_of: str | None = None  # the tensor whose elements this view lists in row-major order

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return prod(self.shape)


def tensor(name: str, shape: Sequence[int], dtype: DType) -> View:
    return View(
        tuple(shape), dtype, lambda idx: (((), Load(name, tuple(idx))),), base=name, contiguous_of=name
    )


def constant(value: float | int | bool, shape: Sequence[int], dtype: DType) -> View:
    return View(tuple(shape), dtype, lambda idx: (((), Const(value)),))


def _remap(v: View, shape: Sequence[int], fn: Callable[[Index], Index]) -> View:
    return View(tuple(shape), v.dtype, lambda idx: v.at(fn(tuple(idx))))


def _norm_dim(dim: int, rank: int) -> int:
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise SolarError(f"dimension {dim} out of range for a tensor of rank {rank}")
    return dim % max(rank, 1)


def permute(v: View, dims: Sequence[int]) -> View:
    dims = [_norm_dim(d, v.rank) for d in dims]
    shape = [v.shape[d] for d in dims]

    def fn(idx: Index) -> Index:
        out: list[Affine] = [Affine()] * v.rank
        for pos, d in enumerate(dims):
            out[d] = idx[pos]
        return tuple(out)

    return _remap(v, shape, fn)


def expand(v: View, shape: Sequence[int]) -> View:
    """Broadcast `v` to `shape` (numpy rules: align right; size-1 dims repeat; -1 keeps the size)."""
    shape = list(shape)
    lead = len(shape) - v.rank
    if lead < 0:
        raise SolarError(f"cannot expand shape {v.shape} to {tuple(shape)}")
    for k, s in enumerate(v.shape):
        if shape[lead + k] == -1:
            shape[lead + k] = s
        elif s not in (1, shape[lead + k]):
            raise SolarError(f"cannot expand shape {v.shape} to {tuple(shape)}")

    def fn(idx: Index) -> Index:
        return tuple(Affine() if s == 1 else idx[lead + k] for k, s in enumerate(v.shape))

    return _remap(v, shape, fn)


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return strides


def reshape(v: View, shape: Sequence[int]) -> View:
    """Row-major reshape as an index map: linearise the new index, unlinearise into the old shape
    (floor-division and modulus by constants; the statement builder simplifies them away when the
    loop ranges allow)."""
    shape = list(shape)
    if -1 in shape:
        known = prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = v.numel // known if known else 0
    if prod(shape) != v.numel:
        raise SolarError(f"cannot reshape {v.shape} to {tuple(shape)}")
    if tuple(shape) == v.shape:
        return v
    new_strides = _contiguous_strides(shape)
    old_strides = _contiguous_strides(v.shape)

    def fn(idx: Index) -> Index:
        linear = Affine()
        for i, s in zip(idx, new_strides):
            linear = linear + i * s
        out = []
        for k, (size, stride) in enumerate(zip(v.shape, old_strides)):
            e = linear // stride
            if k > 0:
                e = e % size
            out.append(Affine() if size == 1 else e)
        return tuple(out)

    return View(tuple(shape), v.dtype, lambda idx: v.at(fn(tuple(idx))), contiguous_of=v.contiguous_of)


def slice_(v: View, dim: int, start: int, end: int, step: int = 1) -> View:
    dim = _norm_dim(dim, v.rank)
    size = v.shape[dim]
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    length = (end - start + step - 1) // step
    shape = list(v.shape)
    shape[dim] = length

    def fn(idx: Index) -> Index:
        out = list(idx)
        out[dim] = idx[dim] * step + start
        return tuple(out)

    return _remap(v, shape, fn)


def select(v: View, dim: int, index: int) -> View:
    dim = _norm_dim(dim, v.rank)
    index = index + v.shape[dim] if index < 0 else index
    shape = v.shape[:dim] + v.shape[dim + 1 :]
    return _remap(v, shape, lambda idx: idx[:dim] + (Affine(const=index),) + idx[dim:])


def unsqueeze(v: View, dim: int) -> View:
    dim = dim % (v.rank + 1)
    shape = v.shape[:dim] + (1,) + v.shape[dim:]
    return _remap(v, shape, lambda idx: idx[:dim] + idx[dim + 1 :])


def squeeze(v: View, dims: Sequence[int] | None = None) -> View:
    if dims is None:
        dims = [d for d, s in enumerate(v.shape) if s == 1]
    dims = sorted({_norm_dim(d, v.rank) for d in dims if v.shape[_norm_dim(d, v.rank)] == 1})
    keep = [d for d in range(v.rank) if d not in dims]
    shape = tuple(v.shape[d] for d in keep)

    def fn(idx: Index) -> Index:
        out: list[Affine] = [Affine()] * v.rank
        for pos, d in enumerate(keep):
            out[d] = idx[pos]
        return tuple(out)

    return _remap(v, shape, fn)


def repeat(v: View, repeats: Sequence[int]) -> View:
    lead = len(repeats) - v.rank
    src_shape = (1,) * lead + v.shape
    shape = tuple(s * r for s, r in zip(src_shape, repeats))
    return _remap(v, shape, lambda idx: tuple(idx[lead + k] % s for k, s in enumerate(v.shape)))


def cat(views: Sequence[View], dim: int) -> View:
    views = [w for w in views if w.numel > 0 or w.rank > 1]
    rank = views[0].rank
    dim = _norm_dim(dim, rank)
    offsets, total = [], 0
    for w in views:
        offsets.append(total)
        total += w.shape[dim]
    shape = list(views[0].shape)
    shape[dim] = total
    dtype = views[0].dtype

    def fn(idx: Index) -> tuple[Alt, ...]:
        alts: list[Alt] = []
        for w, off in zip(views, offsets):
            if w.shape[dim] == 0:
                continue
            guards = (ge(idx[dim], off), lt(idx[dim], off + w.shape[dim]))
            inner = idx[:dim] + (idx[dim] - off,) + idx[dim + 1 :]
            alts.extend((guards + g, e) for g, e in w.at(inner))
        return tuple(alts)

    return View(tuple(shape), dtype, fn)


def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for k, size in enumerate(s):
            pos = rank - len(s) + k
            if size != 1:
                if out[pos] not in (1, size):
                    raise SolarError(f"shapes {[tuple(x) for x in shapes]} do not broadcast")
                out[pos] = size
    return tuple(out)
