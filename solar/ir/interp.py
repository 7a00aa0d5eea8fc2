"""The reference interpreter of the Affine Loop IR: numpy, vectorised per statement.

A statement's *iteration domain* is every combination of its loop variables (each 0..extent-1) that
satisfies all its guards; a *point* is one such combination. The interpreter evaluates the value at
every point at once (numpy broadcasting over one axis per loop), in *blocks* of at most
`chunk_elements` points cut along the outer loops, then combines the values into the target. An
in-order loop runs its body once per step, the step variable replaced by its value."""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from solar.errors import IRVerifyError
from solar.ir.affine import Affine, const
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Expr,
    Index,
    Indirect,
    Load,
    Order,
    Program,
    Role,
    Seq,
    Stmt,
    map_index_terms,
    map_indices,
    order_of,
)
from solar.ir.printer import format_stmt
from solar.ir.scalar_ops import OPS, ScalarOp, Update

DEFAULT_CHUNK_ELEMENTS = 1 << 22  # ~4M points per block: a few tens of MB per live array
STEP_OVERHEAD_POINTS = 2000  # interpreter cost of one statement execution, in iteration points

# A value over a block: a numpy array broadcastable to the block's shape, or a Python scalar (kept
# as a Python scalar so that numpy treats it as "weak" and a float32 program stays float32).
Value = np.ndarray | int | float | bool
Env = dict[str, int | np.ndarray]


# ---- public API ----------------------------------------------------------------------------------


def run(program: Program, inputs: Mapping[str, np.ndarray], **options) -> dict[str, np.ndarray]:
    """Run `program` on `inputs` (one array per input and param tensor) and return its outputs;
    `options` as for run_all."""
    arrays = run_all(program, inputs, **options)
    return {t.name: arrays[t.name] for t in program.with_role(Role.OUTPUT)}


def run_all(
    program: Program,
    inputs: Mapping[str, np.ndarray],
    *,
    chunk_elements: int = DEFAULT_CHUNK_ELEMENTS,
    use_einsum: bool = True,
) -> dict[str, np.ndarray]:
    """Run `program` and return every tensor (inputs, params, temps and outputs) by name.

    `use_einsum=False` disables the contraction fast path (tests compare the two paths)."""
    arrays = _allocate(program, inputs)
    _run_body(program, program.body, arrays, chunk_elements, use_einsum)
    return arrays


def allocate(program: Program, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor of `program` by name: the inputs as given, the rest allocated (run_node fills
    them)."""
    return _allocate(program, inputs)


def run_node(
    program: Program, node: Stmt | Seq, arrays: dict[str, np.ndarray], chunk_elements: int = DEFAULT_CHUNK_ELEMENTS
) -> None:
    """Run one top-level node of `program` on `arrays` (from `allocate`), in place."""
    _run_body(program, (node,), arrays, chunk_elements, True)


def _run_body(
    program: Program, body: tuple, arrays: dict[str, np.ndarray], limit: int, use_einsum: bool
) -> None:
    """Statements in order; an in-order loop runs its body once per step with its variable fixed."""
    for node in body:
        if isinstance(node, Stmt):
            _exec(program, node, arrays, limit, use_einsum)
            continue
        for step in range(program.size(node.extent)):
            fixed = specialise(node.body, {node.var: const(step)})
            _run_body(program, fixed, arrays, limit, use_einsum)


def specialise(body: tuple, mapping: Mapping[str, Affine]) -> tuple:
    """`body` with the variables of `mapping` replaced (an in-order loop's variable by one step)."""

    def sub(e: Affine) -> Affine:
        return e.substitute(mapping)

    out = []
    for node in body:
        if isinstance(node, Seq):
            out.append(replace(node, body=specialise(node.body, mapping)))
        else:
            out.append(
                replace(
                    node,
                    target=replace(node.target, index=map_index_terms(node.target.index, sub)),
                    value=map_indices(node.value, sub),
                    guards=tuple(g.substitute(mapping) for g in node.guards),
                )
            )
    return tuple(out)


def domain_points(program: Program, stmt: Stmt) -> int:
    """Product of the loop extents of `stmt`: a cheap upper bound on its domain (guards ignored)."""
    return math.prod(program.extents(stmt).values())


def program_cost(program: Program) -> int:
    """Interpreter work of one run: iteration points; inside in-order loops also, per statement
    execution (every step), a fixed overhead and the copy a statement reading its own target makes."""
    total = 0
    for seqs, stmt in program.nested():
        executions = math.prod(program.size(s.extent) for s in seqs)
        per_run = STEP_OVERHEAD_POINTS if seqs else 0
        if seqs and any(ld.tensor == stmt.target.tensor for ld in stmt.loads()):
            per_run += program.numel(stmt.target.tensor)
        total += executions * (domain_points(program, stmt) + per_run)
    return total


# ---- storage -------------------------------------------------------------------------------------


def _uninitialised(dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    # Poison values make a read before the first write visible in the outputs (NaN propagates;
    # an integer sentinel used as an index is out of bounds).
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dtype=dt)
    if dt.kind == "i":
        return np.full(shape, np.iinfo(dt).min, dtype=dt)
    if dt.kind == "u":
        return np.full(shape, np.iinfo(dt).max, dtype=dt)
    return np.zeros(shape, dtype=dt)


def _allocate(program: Program, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    declared = {t.name for t in program.tensors}
    unknown = sorted(set(inputs) - declared)
    if unknown:
        raise IRVerifyError(
            f"program {program.name!r}: inputs {unknown} are not tensors of the program "
            f"(declared: {sorted(declared)})"
        )
    arrays: dict[str, np.ndarray] = {}
    for t in program.tensors:
        shape = program.shape(t.name)
        if t.role in (Role.INPUT, Role.PARAM):
            if t.name not in inputs:
                raise IRVerifyError(
                    f"program {program.name!r}: no value given for {t.role.value} {t.name!r} "
                    f"(expected shape {shape})"
                )
            got = np.shape(inputs[t.name])
            if tuple(got) != shape:
                raise IRVerifyError(
                    f"program {program.name!r}: {t.role.value} {t.name!r} expects shape {shape}, "
                    f"got {tuple(got)}"
                )
            # A private copy in the tensor's own numpy type: never alias the caller's data.
            with np.errstate(invalid="ignore", over="ignore"):
                arrays[t.name] = np.array(inputs[t.name], dtype=t.dtype.numpy, copy=True)
        else:
            arrays[t.name] = _uninitialised(t.dtype.numpy, shape)
    return arrays


# ---- blocks --------------------------------------------------------------------------------------

# One entry per loop: a fixed value (outer loops of a domain too big for one block) or a half-open
# range lo..hi.
Span = int | tuple[int, int]


def _blocks(extents: list[int], limit: int) -> Iterator[tuple[Span, ...]]:
    """Cut the box of `extents` into blocks of at most `limit` points along the outer loops."""
    n = len(extents)
    if n == 0:
        yield ()
        return
    suffix = [1] * (n + 1)
    for p in range(n - 1, -1, -1):
        suffix[p] = suffix[p + 1] * extents[p]
    # The first loop p whose inner loops fit in one block is cut in steps; the loops before it are
    # fixed one value at a time, the loops after it are taken whole.
    p = next(p for p in range(n) if suffix[p + 1] <= limit)
    step = max(1, limit // suffix[p + 1])
    inner: tuple[Span, ...] = tuple((0, e) for e in extents[p + 1 :])
    for fixed in itertools.product(*(range(e) for e in extents[:p])):
        for lo in range(0, extents[p], step):
            yield fixed + ((lo, min(lo + step, extents[p])),) + inner


def _block_env(
    program: Program, stmt: Stmt, spans: tuple[Span, ...]
) -> tuple[Env, tuple[int, ...]]:
    """Loop variables as broadcastable grids (one axis per loop, as np.ogrid), and the shape."""
    env: Env = dict(program.symbols)
    shape: list[int] = []
    n = len(spans)
    for axis, (loop, span) in enumerate(zip(stmt.loops, spans)):
        if isinstance(span, int):
            env[loop.var] = span
            shape.append(1)
        else:
            lo, hi = span
            grid_shape = [1] * n
            grid_shape[axis] = hi - lo
            env[loop.var] = np.arange(lo, hi, dtype=np.int64).reshape(grid_shape)
            shape.append(hi - lo)
    return env, tuple(shape)


# ---- statements ----------------------------------------------------------------------------------

# Below this fraction of points passing the guards, a block is compressed to its passing points
# (a flat list, scattered with ufunc.at); above it, the whole block is evaluated densely and the
# failing points are neutralised (cheaper per point, but they are computed too).
DENSE_MIN_FRACTION = 0.125


@dataclass
class _Block:
    """The points of one block of a statement: loop variables as arrays that broadcast to `shape`
    (dense: one axis per loop; flat: one axis listing points), and which of them pass the guards."""

    program: Program
    stmt: Stmt
    arrays: dict[str, np.ndarray]  # what loads read
    target: np.ndarray  # what the statement writes
    env: Env
    shape: tuple[int, ...]
    mask: np.ndarray | None = None  # dense blocks only; None: every point passes
    memo: dict[int, Value] = field(default_factory=dict)
    bound: dict[str, int] = field(default_factory=dict)  # an order's `over` loop: its extent
    seen: dict[int, set] = field(default_factory=dict)  # values of indirect terms claiming `distinct`


def _exec(
    program: Program, stmt: Stmt, arrays: dict[str, np.ndarray], limit: int, use_einsum: bool
) -> None:
    extents = [program.size(loop.extent) for loop in stmt.loops]
    if any(e <= 0 for e in extents):
        return
    if use_einsum and _try_einsum(program, stmt, arrays, extents):
        return
    stmt, bound = _bind_order(program, stmt)
    extents = [program.size(loop.extent) for loop in stmt.loops]
    seen: dict[int, set] = {}
    target, reads = arrays[stmt.target.tensor], arrays
    if any(ld.tensor == stmt.target.tensor for ld in stmt.loads()):
        # Every value is computed before any write: a block must not see earlier blocks' writes.
        reads = dict(arrays, **{stmt.target.tensor: target.copy()})
    tvars = _plain_target_vars(program, stmt, dict(zip(stmt.loop_vars, extents)))
    reduces = tvars is not None and len(tvars) < len(stmt.loops)
    per_point = max(bound.values(), default=1)  # an order reads n keys per point
    for spans in _blocks(extents, max(1, limit // per_point)):
        env, shape = _block_env(program, stmt, spans)
        mask = _guard_mask(stmt, env, shape)
        if mask is not None and not mask.any():
            continue
        dense = tvars is not None and (
            mask is None
            or (
                mask.mean() >= DENSE_MIN_FRACTION and not (reduces and stmt.update is Update.ASSIGN)
            )
        )
        if dense:
            block = _Block(program, stmt, reads, target, env, shape, mask, bound=bound, seen=seen)
            _exec_dense(block, tvars)
        elif mask is None:
            _exec_flat(_Block(program, stmt, reads, target, env, shape, bound=bound, seen=seen))
        else:
            # Keep only the points that pass the guards, so that accesses outside the tensor at
            # guarded-off points (padding) are never evaluated.
            flat: Env = dict(program.symbols)
            for v in stmt.loop_vars:
                x = env[v]
                flat[v] = x if isinstance(x, int) else np.broadcast_to(x, shape)[mask]
            points = (int(mask.sum()),)
            _exec_flat(_Block(program, stmt, reads, target, flat, points, bound=bound, seen=seen))
    _check_distinct(stmt, seen)


def _bind_order(program: Program, stmt: Stmt) -> tuple[Stmt, dict[str, int]]:
    """An order statement runs without its `over` loop: its value does not vary along it, and the
    order statistic binds `over` to every position itself (so each point is evaluated once)."""
    order = order_of(stmt.value)
    if order is None:
        return stmt, {}
    extent = {loop.var: program.size(loop.extent) for loop in stmt.loops}
    loops = tuple(loop for loop in stmt.loops if loop.var != order.over)
    return replace(stmt, loops=loops), {order.over: extent[order.over]}


def _check_distinct(stmt: Stmt, seen: dict[int, set]) -> None:
    """An indirect index claiming `distinct` values must take that many over the domain."""
    for term in (t for ld in stmt.loads() for t in ld.index if isinstance(t, Indirect)):
        if term.distinct > 1 and len(seen.get(id(term), ())) < term.distinct:
            raise IRVerifyError(
                f"a data-dependent index claims at least {term.distinct} distinct values and takes "
                f"{len(seen.get(id(term), ()))}; the frontend's claim is wrong\n"
                f"statement:\n{format_stmt(stmt)}"
            )


def _plain_target_vars(program: Program, stmt: Stmt, extent: dict[str, int]) -> list[str] | None:
    """The target index as distinct bare loop variables that stay inside the target, else None."""
    index = stmt.target.index
    if not all(isinstance(e, Affine) and e.is_plain_var for e in index):
        return None
    tvars = [e.terms[0][0] for e in index]
    shape = program.shape(stmt.target.tensor)
    if len(set(tvars)) != len(tvars) or len(tvars) != len(shape):
        return None
    if not all(v in extent and extent[v] <= size for v, size in zip(tvars, shape)):
        return None  # the flat path reports the out-of-bounds write
    return tvars


def _guard_mask(stmt: Stmt, env: Env, shape: tuple[int, ...]) -> np.ndarray | None:
    """The points of the block that pass every guard, or None when all of them do."""
    if not stmt.guards:
        return None
    mask = np.ones(shape, dtype=bool)
    for g in stmt.guards:
        mask &= g.holds(env)
    return None if mask.all() else mask


def _identity(update: Update, dtype: np.dtype) -> object:
    """The neutral element of an accumulating update in `dtype`: a failing point's contribution."""
    if dtype.kind == "f":
        return update.identity
    if dtype.kind == "b":
        return update in (Update.MUL, Update.MIN)  # and/min start True, or/max start False
    info = np.iinfo(dtype)
    return {Update.ADD: 0, Update.MUL: 1, Update.MAX: info.min, Update.MIN: info.max}[update]


def _exec_dense(block: _Block, tvars: list[str]) -> None:
    """The target index is distinct bare loop variables: points differing only in the reduced
    variables hit one element, so reduce along those axes first and write each element once (no slow
    ufunc.at scatter)."""
    stmt, env, shape, mask = block.stmt, block.env, block.shape, block.mask
    target = block.target
    value = np.broadcast_to(_cast(_eval(block, stmt.value), target.dtype), shape)
    axes = tuple(a for a, v in enumerate(stmt.loop_vars) if v not in tvars)
    idx = tuple(env[v] for v in tvars)
    if stmt.update is Update.ASSIGN:
        if mask is not None:  # no reduced axes here: keep the old content at failing points
            value = np.where(mask, value, target[idx].reshape(value.shape))
        for a in axes:  # several points write one element: the last one wins, as in a loop
            value = value.take([-1], axis=a)
    else:
        if mask is not None:
            value = np.where(mask, value, _identity(stmt.update, target.dtype))
        value = stmt.update.ufunc.reduce(value, axis=axes, keepdims=True) if axes else value
    # The index grids broadcast to the block shape with 1 on reduced axes (or to () when every
    # target variable is fixed in this block); give the value that exact shape.
    value = value.reshape(np.broadcast_shapes(*(np.shape(i) for i in idx)))
    if stmt.update is Update.ASSIGN:
        target[idx] = value
    else:
        target[idx] = stmt.update.ufunc(target[idx], value)


def _exec_flat(block: _Block) -> None:
    stmt, shape = block.stmt, block.shape
    target = block.target
    value = _cast(_eval(block, stmt.value), target.dtype)
    # an indirect (scatter) dim takes its position from the data; several points may hit one
    # element: accumulating updates combine them all (ufunc.at), an assignment keeps one of them
    idx = tuple(_index_value(block, e) for e in stmt.target.index)
    _check_bounds(block, stmt.target.tensor, idx, "writes")
    idx = tuple(np.broadcast_to(i, shape).ravel() for i in idx)
    value = np.broadcast_to(value, shape).ravel()
    if target.ndim == 0:  # a scalar target: ufunc.at needs at least one index array
        if stmt.update is Update.ASSIGN:
            target[()] = value[-1]
        else:
            target[()] = stmt.update.ufunc(target[()], stmt.update.ufunc.reduce(value))
    elif stmt.update is Update.ASSIGN:
        target[idx] = value
    else:
        stmt.update.ufunc.at(target, idx, value)


def _cast(value: Value, dtype: np.dtype) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(value).astype(dtype, copy=False)


def _check_bounds(
    block: _Block, tensor: str, idx: tuple[Value, ...], verb: str
) -> tuple[Value, ...]:
    """Raise if an index falls outside `tensor` at a point that passes the guards. Indices at
    failing points of a dense block are clamped into the tensor (their values are discarded)."""
    dims = block.program.shape(tensor)
    out = list(idx)
    for d, (i, size) in enumerate(zip(idx, dims)):
        bad = (np.asarray(i) < 0) | (np.asarray(i) >= size)
        if not bad.any():
            continue
        real = bad if block.mask is None else bad & block.mask
        if real.any():
            _raise_out_of_bounds(block, tensor, d, i, real, verb)
        out[d] = np.clip(i, 0, size - 1)
    return tuple(out)


def _raise_out_of_bounds(
    block: _Block, tensor: str, dim: int, index: Value, bad: np.ndarray, verb: str
) -> None:
    shape = np.broadcast_shapes(block.shape, np.shape(bad))
    first = int(np.flatnonzero(np.broadcast_to(bad, shape))[0])
    at = {v: int(np.broadcast_to(block.env[v], shape).flat[first]) for v in block.stmt.loop_vars}
    got = int(np.broadcast_to(index, shape).flat[first])
    point = ", ".join(f"{v}={x}" for v, x in at.items())
    raise IRVerifyError(
        f"{verb} {tensor} (shape {block.program.shape(tensor)}) out of bounds: index {got} in "
        f"dim {dim} at point {point or '()'}; guard the access or fix its index\n"
        f"statement:\n{format_stmt(block.stmt)}"
    )


# ---- expressions ---------------------------------------------------------------------------------


def _eval(block: _Block, expr: Expr) -> Value:
    """The value of `expr` at every point of the block.

    Memoised by node identity, so a subtree shared by reference is evaluated once (not by equality:
    Const(1) == Const(1.0) as dataclasses, yet they promote differently)."""
    if id(expr) in block.memo:
        return block.memo[id(expr)]
    match expr:
        case Const(value):
            out: Value = value  # a Python scalar: numpy gives it the type of the other operand
        case Index(e):
            out = e.evaluate(block.env)
            out = out if isinstance(out, int) else np.asarray(out, dtype=np.int64)
        case Cast(dtype, arg):
            out = _cast(_eval(block, arg), np.dtype(dtype.numpy))
        case Call(op, args):
            info = OPS[op]
            if len(args) != info.arity:
                raise IRVerifyError(
                    f"{op.value} takes {info.arity} arguments, got {len(args)}\n"
                    f"statement:\n{format_stmt(block.stmt)}"
                )
            vals = [_eval(block, a) for a in args]
            out = info.fn(*vals)
            if all(not isinstance(v, np.ndarray) for v in vals) and np.ndim(out) == 0:
                out = np.asarray(out).item()  # constant-only subtree: stay a weak Python scalar
        case Order():
            out = _order(block, expr)
        case Load(tensor, index):
            arr = block.arrays[tensor]
            if len(index) != arr.ndim:
                raise IRVerifyError(
                    f"the statement indexes {tensor} (rank {arr.ndim}) with {len(index)} indices\n"
                    f"statement:\n{format_stmt(block.stmt)}"
                )
            idx = tuple(_index_value(block, t) for t in index)
            out = arr[_check_bounds(block, tensor, idx, "reads")]
        case _:
            raise TypeError(expr)
    block.memo[id(expr)] = out
    return out


def _index_value(block: _Block, term: Affine | Indirect) -> Value:
    if isinstance(term, Affine):
        return term.evaluate(block.env)
    data = _eval(block, term.value)
    with np.errstate(invalid="ignore", over="ignore"):
        # int(value) truncates toward zero, as astype does; NaN or a sentinel ends up out of bounds.
        out = np.asarray(data).astype(np.int64) + term.offset.evaluate(block.env)
    if term.distinct > 1:
        values = out if block.mask is None else np.broadcast_to(out, block.mask.shape)[block.mask]
        block.seen.setdefault(id(term), set()).update(np.unique(values).tolist())
    return out


def _order(block: _Block, order: Order) -> np.ndarray:
    """The order statistic at every point of the block: the key evaluated with `over` on a new
    last axis (0..n-1), its stable argsort along that axis, taken at each point's rank."""
    n = block.bound[order.over]
    ndim = len(block.shape)
    env = {v: (x[..., None] if isinstance(x, np.ndarray) else x) for v, x in block.env.items()}
    env[order.over] = np.arange(n, dtype=np.int64).reshape((1,) * ndim + (n,))
    sub = _Block(block.program, block.stmt, block.arrays, block.target, env, (*block.shape, n))
    key = np.asarray(_eval(sub, order.key))
    key = np.broadcast_to(key, np.broadcast_shapes(key.shape, (1,) * ndim + (n,)))
    perm = _stable_argsort(key, order.descending)
    rank = order.rank.evaluate(block.env)
    if np.any((np.asarray(rank) < 0) | (np.asarray(rank) >= n)):
        raise IRVerifyError(
            f"an order statistic asks for a rank outside 0..{n - 1}\n"
            f"statement:\n{format_stmt(block.stmt)}"
        )
    lead = np.broadcast_shapes(perm.shape[:-1], np.shape(rank))
    perm = np.broadcast_to(perm, (*lead, n))
    at = np.broadcast_to(np.asarray(rank, dtype=np.int64), lead)[..., None]
    return np.take_along_axis(perm, at, axis=-1)[..., 0]


def _stable_argsort(key: np.ndarray, descending: bool) -> np.ndarray:
    """Positions along the last axis in ascending (descending) order of `key`; ties by position,
    NaN greatest (PyTorch's order)."""
    if key.dtype.kind in "biu":
        flipped = ~key if key.dtype.kind != "b" else ~key.astype(bool)
        return np.argsort(flipped if descending else key, axis=-1, kind="stable")
    x = key.astype(np.float64)
    nan = np.isnan(x)
    if not descending:
        return np.argsort(x, axis=-1, kind="stable")  # numpy sorts NaN last, stably
    # NaN first, then values from the greatest; lexsort is stable (its last key is the primary)
    return np.lexsort((np.where(nan, 0.0, -x), ~nan), axis=-1)


# ---- contraction fast path -----------------------------------------------------------------------


def _product_factors(expr: Expr) -> list[Expr] | None:
    """The factors of a product tree of loads (each optionally cast), or None if it is not one."""
    match expr:
        case Call(ScalarOp.MUL, (a, b)):
            fa, fb = _product_factors(a), _product_factors(b)
            return None if fa is None or fb is None else fa + fb
        case Cast(_, Load()) | Load():
            return [expr]
    return None


def _try_einsum(
    program: Program, stmt: Stmt, arrays: dict[str, np.ndarray], extents: list[int]
) -> bool:
    """Run `T[vars] += A[vars] * B[vars] * ...` (bare loop variables everywhere) with np.einsum.

    Returns False, doing nothing, when the statement is not of that form; the generic path then runs
    (and reports any out-of-bounds access)."""
    if stmt.update is not Update.ADD or stmt.guards or len(stmt.loops) > len(string.ascii_letters):
        return False
    factors = _product_factors(stmt.value)
    if factors is None:
        return False
    extent = dict(zip(stmt.loop_vars, extents))
    letter = dict(zip(stmt.loop_vars, string.ascii_letters))

    def plain_vars(index: tuple) -> list[str] | None:
        if not all(isinstance(t, Affine) and t.is_plain_var for t in index):
            return None
        names = [t.terms[0][0] for t in index]
        return names if all(v in extent for v in names) else None

    out_vars = plain_vars(stmt.target.index)
    if out_vars is None or len(set(out_vars)) != len(out_vars):
        return False
    operands, subscripts, used = [], [], set()
    for f in factors:
        load = f.arg if isinstance(f, Cast) else f
        names = plain_vars(load.index)
        arr = arrays[load.tensor]
        if names is None or len(names) != arr.ndim:
            return False
        if any(extent[v] > size for v, size in zip(names, arr.shape)):
            return False  # out of bounds: let the generic path report it
        view = arr[tuple(slice(0, extent[v]) for v in names)]
        if isinstance(f, Cast):
            view = view.astype(f.dtype.numpy)
        operands.append(view)
        subscripts.append("".join(letter[v] for v in names))
        used |= set(names)
    if used != set(stmt.loop_vars):
        return False  # a loop variable no factor depends on multiplies the sum: generic path
    target = arrays[stmt.target.tensor]
    # einsum accumulates in the operands' type, the generic path in the target's: same type only.
    if np.result_type(*operands) != target.dtype:
        return False
    if len(out_vars) != target.ndim or any(
        extent[v] > size for v, size in zip(out_vars, target.shape)
    ):
        return False
    spec = ",".join(subscripts) + "->" + "".join(letter[v] for v in out_vars)
    result = np.einsum(spec, *operands, optimize=True)
    # Index assignment (not a view): a 0-d target's [()] would be a copy.
    region = tuple(slice(0, extent[v]) for v in out_vars)
    target[region] = target[region] + _cast(result, target.dtype)
    return True
