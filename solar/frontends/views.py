"""Lazy tensor views: a shape, a dtype and an index map from the view's index to guarded
alternatives of IR expressions. View ops (reshape, permute, expand, slice, select, cat, repeat, ...)
compose index maps and never copy; a consumer statement reads the base tensors directly. Also:
views at data-dependent positions (`indirect`) and tensors whose values are known to depend on
position (`Band`, `detect_band`, `banded`).

An alternative is `(guards, expr)`: where the guards hold, the element is `expr`. Most views have a
single unguarded alternative; `cat` has one alternative per piece, guarded by the piece's range, and
the statement builder splits a consumer into one statement per feasible combination.

Index maps are composed once per view, not once per use (`indexed`): a view's map is evaluated at
placeholder indices ranging over its own shape and simplified there (floor-divisions and moduli
that the ranges make trivial removed, guards that always hold dropped, pieces that cannot hold
pruned), and a use substitutes its index for the placeholders. A chain of reshapes, permutes and
rolls therefore keeps expressions of the size of one step, where composing closures at each use
nested every step's floor-divisions inside the next one's (window partitions grew to thousands of
terms per index)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from math import prod
from typing import Any, Callable, Sequence

import numpy as np

from solar.errors import SolarError
from solar.ir.affine import Affine, Constraint, clip_ranges, ge, lt, simplify, value_range, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Call, Cast, Const, Expr, Indirect, Load, map_indices
from solar.ir.nodes import Index as IndexValue

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


# ---- composing index maps once -------------------------------------------------------------------

SLOT = "_at"  # placeholder index variables _at0, _at1, ... (no loop variable starts with "_at")


def indexed(
    shape: Sequence[int], dtype: DType, fn: IndexMap, contiguous_of: str | None = None
) -> View:
    """The view with index map `fn`, composed once: `fn` is evaluated (on first use) at
    placeholder indices over `shape` and simplified with their ranges; each use substitutes its
    index. A use's index lies inside the view's shape wherever its value is used (that is what an
    index of the view is), so a map simplified on the shape's box gives the same elements. A map
    that cannot be evaluated at placeholders (one that refuses a symbolic index) is used as is."""
    shape = tuple(int(n) for n in shape)
    memo: list[tuple[Alt, ...] | None] = []

    def at(idx: Index) -> tuple[Alt, ...]:
        if not memo:
            memo.append(_composed(shape, fn))
        alts = memo[0]
        if alts is None:
            return fn(tuple(idx))
        mapping = {f"{SLOT}{k}": e for k, (e, n) in enumerate(zip(idx, shape)) if n > 1}
        return _substituted(alts, mapping)

    return View(shape, dtype, at, contiguous_of=contiguous_of)


def _composed(shape: tuple[int, ...], fn: IndexMap) -> tuple[Alt, ...] | None:
    if 0 in shape:
        return None
    slots = tuple(Affine() if n == 1 else var(f"{SLOT}{k}") for k, n in enumerate(shape))
    ranges = {f"{SLOT}{k}": (0, n - 1) for k, n in enumerate(shape) if n > 1}
    try:
        alts = fn(slots)
    except SolarError:
        return None
    out: list[Alt] = []
    for guards, expr in alts:
        kept = _live_guards(guards, ranges)
        if kept is not None:
            out.append((kept, map_indices(expr, lambda e: _simplified(e, ranges))))
    return tuple(out)


def _simplified(e: Affine, ranges: dict[str, tuple[int, int]]) -> Affine:
    """`e` simplified over `ranges`; atoms with variables outside `ranges` (an enclosing in-order
    loop's step, a data-dependent slot) are kept as they are."""
    if e.is_linear:
        return e
    if e.variables <= ranges.keys():
        return simplify(e, ranges)
    out = Affine(const=e.const)
    for atom, coeff in e.terms:
        one = Affine(((atom, 1),))
        out = out + (simplify(one, ranges) if one.variables <= ranges.keys() else one) * coeff
    return out


def _live_guards(
    guards: tuple[Constraint, ...], ranges: dict[str, tuple[int, int]]
) -> tuple[Constraint, ...] | None:
    """The guards that do not always hold over `ranges`, simplified; None when they cannot all
    hold (decided for guards in one variable, as pieces of views are)."""
    kept: list[Constraint] = []
    for g in guards:
        g = Constraint(_simplified(g.expr, ranges), g.equality)
        if g.variables <= ranges.keys():
            lo, hi = value_range(g.expr, ranges)
            if (lo == hi == 0) if g.equality else lo >= 0:
                continue
            if (lo > 0 or hi < 0) if g.equality else hi < 0:
                return None
        if g not in kept:
            kept.append(g)
    if clip_ranges(ranges, tuple(kept)) is None:
        return None
    return tuple(kept)


def _substituted(alts: tuple[Alt, ...], mapping: dict[str, Affine]) -> tuple[Alt, ...]:
    if not mapping:
        return alts

    def sub(e: Affine) -> Affine:
        return e.substitute(mapping)

    return tuple(
        (tuple(g.substitute(mapping) for g in guards), map_indices(expr, sub))
        for guards, expr in alts
    )


def feasible(guards: Sequence[Constraint]) -> bool:
    """False when the guards bound one linear form (up to a positive factor and its sign) to an
    empty interval, as the pieces of one concatenation (or roll, or pad) do where two of them meet
    in one combination of alternatives; True otherwise (the guards may still be infeasible in ways
    this does not see: the statement builder and the counters decide those)."""
    bounds: dict[tuple, list[float]] = {}
    for g in guards:
        e = g.expr
        if not e.terms:
            if (e.const != 0) if g.equality else (e.const < 0):
                return False
            continue
        if len(e.terms) == 1:
            key, c = e.terms[0]
            sign, d = (1, c) if c > 0 else (-1, -c)
        else:
            sign = 1 if e.terms[0][1] > 0 else -1
            d = math.gcd(*(c for _, c in e.terms))
            key = tuple((a, sign * c // d) for a, c in e.terms)  # e = sign*d*L + const
        lo, hi = bounds.setdefault(key, [-math.inf, math.inf])
        k = e.const
        if g.equality:
            if k % d:
                return False
            lo = hi = -sign * k // d
        elif sign > 0:
            lo = -(k // d)  # L >= ceil(-k / d)
        else:
            hi = k // d  # L <= floor(k / d)
        b = bounds[key]
        b[0], b[1] = max(b[0], lo), min(b[1], hi)
        if b[0] > b[1]:
            return False
    return True


def _remap(v: View, shape: Sequence[int], fn: Callable[[Index], Index]) -> View:
    return indexed(shape, v.dtype, lambda idx: v.at(fn(tuple(idx))))


def _norm_dim(dim: int, rank: int) -> int:
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise SolarError(f"dimension {dim} out of range for a tensor of rank {rank}")
    return dim % max(rank, 1)


def permute(v: View, dims: Sequence[int]) -> View:
    return _through(v, [_norm_dim(d, v.rank) for d in dims])


def _through(v: View, dims: Sequence[int]) -> View:
    """`v` with its dims `dims` in that order (dim k of the result is dim dims[k] of v); a dim left
    out (of size 1) is read at 0."""

    def fn(idx: Index) -> Index:
        out: list[Affine] = [Affine()] * v.rank
        for pos, d in enumerate(dims):
            out[d] = idx[pos]
        return tuple(out)

    return _remap(v, [v.shape[d] for d in dims], fn)


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

    return indexed(shape, v.dtype, lambda idx: v.at(fn(tuple(idx))), contiguous_of=v.contiguous_of)


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
    return _through(v, [d for d in range(v.rank) if d not in dims])


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

    return indexed(shape, dtype, fn)


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


# ---- data-dependent indexing ---------------------------------------------------------------------

SourceIndex = tuple[Affine | Expr, ...]  # per source dim: an affine index, or an integer-valued Expr


def _resolve(expr: Expr, slots: dict[str, Expr]) -> Expr:
    """Turn accesses that use a placeholder variable `p` (as `p + affine`) into indirect terms."""
    match expr:
        case Load(name, index):
            terms = []
            for t in index:
                if isinstance(t, Indirect):
                    if t.offset.variables & slots.keys():
                        raise SolarError("an indirect index nested in an indirect offset")
                    terms.append(Indirect(_resolve(t.value, slots), t.offset))
                    continue
                used = t.variables & slots.keys()
                if not used:
                    terms.append(t)
                    continue
                p = next(iter(used))
                rest = t - var(p)
                if len(used) > 1 or t.coefficient(p) != 1 or rest.variables & slots.keys():
                    raise SolarError(f"data-dependent index used non-linearly in {t}")
                terms.append(Indirect(slots[p], rest))
            return Load(name, tuple(terms))
        case IndexValue(e) if e.variables & slots.keys():
            raise SolarError("a data-dependent index used as a value")
        case Call(op, args):
            return Call(op, tuple(_resolve(a, slots) for a in args))
        case Cast(dtype, arg):
            return Cast(dtype, _resolve(arg, slots))
    return expr


def indirect(v: View, shape: Sequence[int], fn: Callable[[Index], SourceIndex]) -> View | None:
    """A view of `v` at data-dependent positions (gather, embedding, advanced indexing):
    `fn(idx)` gives, per dimension of `v`, an affine index or an integer-valued expression (a load
    of an index tensor). The loads of `v`'s base tensors get indirect index terms; None when `v`'s
    index map uses a data-dependent dimension non-linearly (the caller materialises `v` first)."""

    def at(idx: Index) -> tuple[Alt, ...]:
        slots: dict[str, Expr] = {}
        src: list[Affine] = []
        for k, s in enumerate(fn(tuple(idx))):
            if isinstance(s, Affine):
                src.append(s)
            else:
                slots[f"_ind{k}"] = s
                src.append(var(f"_ind{k}"))
        alts = v.at(tuple(src))
        if any(g.variables & slots.keys() for guards, _ in alts for g in guards):
            raise SolarError("a data-dependent index selects between pieces of a view")
        return tuple((guards, _resolve(e, slots)) for guards, e in alts)

    out = View(tuple(shape), v.dtype, at)
    try:
        out.at(tuple(var(f"_probe{k}") for k in range(len(shape))))
    except SolarError:
        return None
    return out


# ---- index structure of known values -------------------------------------------------------------


@dataclass(frozen=True)
class Band:
    """Values known to depend on position: over the last two dims (i, j), the elements with
    lo <= j - i <= hi (None: unbounded) hold `inside` (None: the tensor's own values) and every
    other element holds `outside`; equal for every index of the leading dims."""

    lo: int | None
    hi: int | None
    inside: float | bool | None
    outside: float | bool

    def describe(self) -> str:
        kept = " and ".join(
            text for text in (
                None if self.lo is None else f"j - i >= {self.lo}",
                None if self.hi is None else f"j - i <= {self.hi}",
            ) if text
        )
        shape = {(None, 0): "lower-triangular", (0, None): "upper-triangular"}.get(
            (self.lo, self.hi), "banded"
        )
        value = "its values" if self.inside is None else repr(self.inside)
        return f"{shape}: {value} where {kept}, {self.outside!r} elsewhere (last two dims i, j)"


def _extremes(keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Row by row (a causal mask of a 4096-token prefill has 16M elements): the rows holding a kept
    element, each one's first and last kept column, and the extreme diagonals lo, hi of j - i."""
    m = keep.shape[1]
    rows = np.flatnonzero(keep.any(axis=1))
    first = keep[rows].argmax(axis=1)
    last = m - 1 - keep[rows, ::-1].argmax(axis=1)
    return rows, first, last, int((first - rows).min()), int((last - rows).max())


def _sides(lo: int, hi: int, n: int, m: int) -> tuple[int | None, int | None]:
    return (None if lo <= -(n - 1) else lo), (None if hi >= m - 1 else hi)


def _band_of(keep: np.ndarray) -> tuple[int | None, int | None] | None:
    """The band lo <= j - i <= hi that `keep` (2-D bool) is exactly, if it is one with a nonempty
    complement (unbounded sides as None): each row keeps exactly the band's run of columns."""
    n, m = keep.shape
    counts = keep.sum(axis=1)
    if not counts.any() or counts.sum() == n * m:
        return None
    rows, first, last, lo, hi = _extremes(keep)
    i = np.arange(n)
    start, stop = np.maximum(i + lo, 0), np.minimum(i + hi, m - 1)
    if not np.array_equal(counts, np.maximum(stop - start + 1, 0)):
        return None
    if not (np.array_equal(first, start[rows]) and np.array_equal(last, stop[rows])):
        return None
    return _sides(lo, hi, n, m)


def _two_values(a: np.ndarray) -> tuple[Any, Any] | None:
    """The two distinct values of `a`, smaller first, if it holds exactly two (np.unique's answer
    without its sort; NaN, never equal to itself, is left to np.unique)."""
    flat = a.reshape(-1)
    v0 = flat[0]
    other = flat != v0
    if not other.any():
        return None
    v1 = flat[other.argmax()]
    if v0 != v0 or v1 != v1:  # NaN
        distinct = np.unique(flat)
        return (distinct[0], distinct[1]) if len(distinct) == 2 else None
    if not ((flat == v1) | ~other).all():
        return None
    return (v0, v1) if v0 < v1 else (v1, v0)


def detect_band(values: np.ndarray, constant_inside: bool) -> Band | None:
    """The Band structure of `values` (rank >= 2), if any. `constant_inside`: both parts must be
    constants (a mask such as tril(ones)); else the outside must be zero and the inside is the
    tensor's own values (a triangular matrix), found from where the nonzeros lie."""
    a = np.asarray(values)
    if a.ndim < 2 or a.shape[-1] < 2 or a.shape[-2] < 2:
        return None
    if constant_inside:
        first = a.reshape(-1, *a.shape[-2:])[0]
        if not (a == first).all():
            return None
        distinct = _two_values(first)
        if distinct is None:
            return None
        for inside, outside in ((distinct[1], distinct[0]), (distinct[0], distinct[1])):
            band = _band_of(first == inside)
            if band is not None:
                return Band(*band, inside.item(), outside.item())
        return None
    nonzero = (a != 0).reshape(-1, *a.shape[-2:]).any(axis=0)
    if not nonzero.any():
        return None
    band = _sides(*_extremes(nonzero)[3:], *nonzero.shape)
    if band == (None, None):
        return None
    return Band(*band, None, np.zeros((), a.dtype).item())


def banded(v: View, band: Band) -> View:
    """`v` with its Band structure as guarded pieces: consumers split into a piece per region, and
    the constant regions cost nothing."""
    inner = v.at

    def at(idx: Index) -> tuple[Alt, ...]:
        d = idx[-1] - idx[-2]
        keep = tuple(
            c for c in (
                None if band.lo is None else ge(d, band.lo),
                None if band.hi is None else ge(band.hi, d),
            ) if c is not None
        )
        if band.inside is None:
            alts = tuple((keep + g, e) for g, e in inner(idx))
        else:
            alts = ((keep, Const(band.inside)),)
        if band.lo is not None:
            alts += (((lt(d, band.lo),), Const(band.outside)),)
        if band.hi is not None:
            alts += (((ge(d, band.hi + 1),), Const(band.outside)),)
        return alts

    return View(v.shape, v.dtype, at)
