"""The structural verifier of IR programs: declarations and sizes, loop variables, every access
inside its tensor over the iteration domain, and dataflow order (temps and outputs written before
read).

Terms: the *iteration domain* of a statement is the set of loop-variable points (each var in
0..extent-1) that satisfy its guards; an *access* is a tensor name with one index term per
dimension."""

from __future__ import annotations

import functools
import importlib
import math
import re
from typing import Callable, Iterable, Mapping

import numpy as np

from solar.errors import IRVerifyError
from solar.ir.affine import Affine, Constraint, clip_ranges, magnitude, value_range
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Expr,
    Index,
    IndexTerm,
    Indirect,
    Load,
    Order,
    Program,
    Role,
    Size,
    Stmt,
    TensorDecl,
    loads,
    order_of,
    term_variables,
    walk,
)
from solar.ir.printer import format_affine, format_expr, format_stmt, format_store
from solar.ir.scalar_ops import OPS, Update

__all__ = ["verify", "verify_stmt", "ENUMERATION_LIMIT"]

# Above this many iteration points the exact fallback check is skipped and the interval violation is
# reported as is (enumeration costs ~ one int64 array of this size per index term).
ENUMERATION_LIMIT = 2_000_000

# Names the text form can print and parse back (the NAME terminal of solar.ir.parser).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_READ_ONLY = (Role.INPUT, Role.PARAM)
_NEEDS_WRITE = (Role.TEMP, Role.OUTPUT)

# builds the error for one statement from a problem description
Fail = Callable[[str], IRVerifyError]


def verify(program: Program) -> None:
    """Raise IRVerifyError at the first problem of `program`; return None when it is well formed."""
    _check_declarations(program)
    tensors = {t.name: t for t in program.tensors}
    shapes = {t.name: program.shape(t.name) for t in program.tensors}  # sizes checked above
    written: set[str] = set()
    for number, stmt in enumerate(program.stmts):
        _check_stmt(program, stmt, number, tensors, shapes)
        for load in stmt.loads():
            decl = tensors[load.tensor]
            if decl.role in _NEEDS_WRITE and load.tensor not in written:
                raise _stmt_error(
                    program,
                    stmt,
                    number,
                    f"reads {decl.role.value} {load.tensor!r} "
                    "before any earlier statement writes it",
                )
        target = stmt.target.tensor
        if stmt.update is not Update.ASSIGN and target not in written:
            raise _stmt_error(
                program,
                stmt,
                number,
                f"accumulates ({stmt.update.value}) into {target!r}, "
                f"which no earlier statement initialises; add e.g. `{target}[...] = "
                f"{_identity_text(stmt.update)}` before it",
            )
        written.add(target)
    for decl in program.with_role(Role.OUTPUT):
        if decl.name not in written:
            raise IRVerifyError(f"program {program.name!r}: output {decl.name!r} is never written")


def verify_stmt(program: Program, stmt: Stmt) -> None:
    """Check one statement against the declarations of `program` (no dataflow-order checks)."""
    number = next((k for k, s in enumerate(program.stmts) if s is stmt), None)
    _check_stmt(program, stmt, number, {t.name: t for t in program.tensors})


# ---- errors --------------------------------------------------------------------------------------


def _stmt_error(program: Program, stmt: Stmt, number: int | None, problem: str) -> IRVerifyError:
    """First line: program, statement number and problem (the CLI prints one line); then the
    statement in the text form."""
    where = f"statement {number}" if number is not None else "statement"
    seqs: tuple = ()
    if number is not None and number < len(program.stmts) and program.stmts[number] is stmt:
        seqs, stmt = list(program.nested())[number]  # show it inside its in-order loops
    try:
        printed = format_stmt(stmt, "  " * len(seqs))
    except TypeError:  # a node the printer does not know (the problem being reported)
        printed = repr(stmt)
    if seqs:
        heads = [f"{'  ' * k}for {q.var} in 0..{q.extent} in order {{" for k, q in enumerate(seqs)]
        printed = "\n".join([*heads, printed, *("  " * k + "}" for k in reversed(range(len(seqs))))])
    text = "\n".join("    " + line for line in printed.splitlines())
    return IRVerifyError(f"program {program.name!r}, {where}: {problem}\n{text}")


def _identity_text(update: Update) -> str:
    value = update.identity
    return "-inf" if value == float("-inf") else "inf" if value == float("inf") else repr(value)


# ---- declarations --------------------------------------------------------------------------------


def _check_declarations(program: Program) -> None:
    def fail(problem: str) -> IRVerifyError:
        return IRVerifyError(f"program {program.name!r}: {problem}")

    _check_names([name for name, _ in program.symbols], "symbol", "bound twice", fail)
    _check_names([t.name for t in program.tensors], "tensor", "declared twice", fail)
    symbols: dict[str, int] = {}
    for name, value in program.symbols:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise fail(f"symbol {name!r} = {value!r}: sizes must be positive integers")
        symbols[name] = value
    for t in program.tensors:
        for dim, size in enumerate(t.shape):
            problem = _size_problem(size, symbols)
            if problem:
                raise fail(f"tensor {t.name!r} dimension {dim}: {problem}")
    updated: set[str] = set()
    for t in program.tensors:
        if t.updates is not None:
            _check_update(program, t, updated, fail)


def _check_update(program: Program, t: TensorDecl, updated: set[str], fail: Fail) -> None:
    """`output o: ... updates x`: x is an input or param of o's shape and dtype, updated once."""
    source = next((s for s in program.tensors if s.name == t.updates), None)
    what = f"tensor {t.name!r} updates {t.updates!r}"
    if t.role is not Role.OUTPUT:
        raise fail(f"{what}, but only an output can update an input in place")
    if source is None or source.role not in _READ_ONLY:
        raise fail(f"{what}, which is not a declared input or param")
    if (source.shape, source.dtype) != (t.shape, t.dtype):
        raise fail(f"{what}, whose shape or dtype differs (in-place updates keep both)")
    if t.updates in updated:
        raise fail(f"{what}, which another output already updates")
    updated.add(t.updates)


def _check_names(names: Iterable[str], what: str, twice: str, fail: Fail) -> None:
    """Every name an identifier the text form can print and parse back, none given twice."""
    seen: set[str] = set()
    for name in names:
        if not _is_name(name):
            raise fail(f"{what} name {name!r} is not an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        if name in seen:
            raise fail(f"{what} {name!r} is {twice}")
        seen.add(name)


@functools.lru_cache(maxsize=1 << 14)
def _is_name(name: str) -> bool:
    """Whether `name` is an identifier the text form prints and parses back (loop variables repeat
    across statements: matched once per name)."""
    return _NAME.fullmatch(name) is not None


def _size_problem(size: Size, symbols: dict[str, int]) -> str | None:
    """Why `size` is not a positive integer or a bound symbol (None when it is fine)."""
    if isinstance(size, str):
        if size in symbols:
            return None
        return f"size symbol {size!r} is not bound (add `sym {size} = ...`)"
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        return f"size {size!r} is neither an integer nor a symbol name"
    return None if size > 0 else f"size {size} is not positive"


# ---- one statement -------------------------------------------------------------------------------


def _check_stmt(
    program: Program,
    stmt: Stmt,
    number: int | None,
    tensors: Mapping[str, TensorDecl],
    shapes: Mapping[str, tuple[int, ...]] | None = None,
) -> None:
    def fail(problem: str) -> IRVerifyError:
        return _stmt_error(program, stmt, number, problem)

    symbols = dict(program.symbols)
    _check_names(stmt.loop_vars, "loop variable", "bound twice", fail)
    loop_vars = set(stmt.loop_vars)
    for loop in stmt.loops:
        problem = _size_problem(loop.extent, symbols)
        if problem:
            raise fail(f"loop {loop.var!r}: {problem}")

    # `what` makes the text naming the access or guard: printed only for a message
    def check_vars(expr: Affine, what: Callable[[], str]) -> None:
        if expr.variables <= loop_vars:
            return
        free = sorted(expr.variables - loop_vars)
        if free:
            loops = ", ".join(stmt.loop_vars) or "none"
            raise fail(
                f"{what()} uses {', '.join(map(repr, free))}, which is not a loop variable of this "
                f"statement (loops: {loops})"
            )

    def check_access(name: str, index: tuple[IndexTerm, ...], text: Callable[[], str]) -> None:
        if name not in tensors:
            raise fail(f"{text()} names undeclared tensor {name!r}")
        rank = len(tensors[name].shape)
        if len(index) != rank:
            raise fail(f"{text()} has {len(index)} index terms but {name!r} has {rank} dimensions")
        for term in index:
            check_vars(term.offset if isinstance(term, Indirect) else term, text)

    # target
    target = stmt.target
    check_access(target.tensor, target.index, lambda: f"store {format_store(target)}")
    for term in target.index:
        if isinstance(term, Indirect):  # a data-dependent store (scatter): check its index value
            _check_indirect(tensors, term, fail)
            for ld in loads(term.value):
                check_access(ld.tensor, ld.index, lambda ld=ld: f"load {format_expr(ld)}")
    if tensors[target.tensor].role in _READ_ONLY:
        raise fail(
            f"stores into {tensors[target.tensor].role.value} {target.tensor!r}, which is read-only"
        )
    for guard in stmt.guards:
        check_vars(guard.expr, lambda guard=guard: f"guard `{guard}`")

    # value expression
    for expr in walk(stmt.value):
        match expr:
            case Load(name, index):
                check_access(name, index, lambda expr=expr: f"load {format_expr(expr)}")
                for term in index:
                    if isinstance(term, Indirect):
                        _check_indirect(tensors, term, fail)
            case Call(op, args):
                if op not in OPS:
                    raise fail(f"call {format_expr(expr)}: op {op!r} has no row in scalar_ops.OPS")
                if len(args) != OPS[op].arity:
                    raise fail(
                        f"call {op.value}(...) has {len(args)} arguments, expected {OPS[op].arity}"
                    )
            case Index(e):
                check_vars(e, lambda e=e: f"index({format_affine(e)})")
            case Cast() | Const():
                pass
            case Order():
                _check_order(program, stmt, expr, fail)
            case _:
                raise fail(f"unknown expression node {expr!r}")

    _check_bounds(program, stmt, fail, shapes)


def _check_order(program: Program, stmt: Stmt, order: Order, fail: Fail) -> None:
    """An order statistic is the whole value of an assignment (casts allowed), along one of the
    statement's loops that neither the target nor a guard uses; its key is a load under casts (it
    computes nothing) and its rank lies in 0..n-1 over the loop ranges."""
    text = format_expr(order)
    if order_of(stmt.value) is not order or stmt.update is not Update.ASSIGN:
        raise fail(f"{text} must be the whole value of an assignment (`=`, casts allowed)")
    extents = {loop.var: program.size(loop.extent) for loop in stmt.loops}
    if order.over not in extents:
        raise fail(f"{text} orders along {order.over!r}, which is not a loop variable here")
    used = {v for t in stmt.target.index for v in term_variables(t)}
    used |= {v for g in stmt.guards for v in g.expr.variables} | order.rank.variables
    if order.over in used:
        raise fail(f"{text}: the target, the guards and the rank must not use {order.over!r}")
    key = order.key
    while isinstance(key, Cast):
        key = key.arg
    if not isinstance(key, Load) or not all(isinstance(t, Affine) for t in key.index):
        raise fail(f"{text}: the key must be a load with affine indices (materialise it first)")
    lo, hi = value_range(order.rank, {v: (0, n - 1) for v, n in extents.items()})
    if lo < 0 or hi >= extents[order.over]:
        raise fail(f"{text}: rank ranges over {lo}..{hi}, outside 0..{extents[order.over] - 1}")


def _check_indirect(tensors: Mapping[str, TensorDecl], term: Indirect, fail: Fail) -> None:
    kind = _dtype_kind(tensors, term.value)
    if kind is not None and kind != "int":
        raise fail(
            f"data-dependent index ind({format_expr(term.value)}) has a {kind} value; index values "
            "must be integers (cast with i64(...))"
        )


def _dtype_kind(tensors: Mapping[str, TensorDecl], expr: Expr) -> str | None:
    """ "int", "float" or "bool" where the element type of `expr` is evident, else None."""
    match expr:
        case Load(name, _):
            # an undeclared tensor is reported when the walk reaches the load itself
            return tensors[name].dtype.kind if name in tensors else None
        case Cast(dtype, _):
            return dtype.kind
        case Index():
            return "int"
        case Const(value):
            return (
                "bool" if isinstance(value, bool) else "int" if isinstance(value, int) else "float"
            )
    return None


# ---- bounds --------------------------------------------------------------------------------------


def _accesses(stmt: Stmt) -> Iterable[tuple[str, tuple[IndexTerm, ...], Callable[[], str]]]:
    """(tensor, index, text for messages) of the store and of every load; the text is made only
    when a message needs it."""
    target = stmt.target
    yield target.tensor, target.index, lambda: f"store {format_store(target)}"
    for load in stmt.loads():
        yield load.tensor, load.index, lambda load=load: f"load {format_expr(load)}"


def _check_bounds(
    program: Program, stmt: Stmt, fail: Fail, shapes: Mapping[str, tuple[int, ...]] | None = None
) -> None:
    """Every affine index term lies in 0..size-1 over the iteration domain.

    Interval arithmetic over the loop box is exact for linear terms without guards (the extremes
    are attained at corners), so only guarded or quasi-affine accesses that fail it get the exact
    check."""
    box = {v: (0, n - 1) for v, n in program.extents(stmt).items()}
    # Single-variable guards (a cat piece's range) narrow the box: it still contains the domain,
    # so an access inside it on the narrowed box is inside on the domain.
    ranges = clip_ranges(box, stmt.guards)
    if ranges is None:
        return  # no point: nothing is accessed
    for name, index, describe in _accesses(stmt):
        shape = shapes[name] if shapes is not None else program.shape(name)
        violations = []
        for dim, (term, size) in enumerate(zip(index, shape, strict=True)):
            if isinstance(term, Affine):
                lo, hi = value_range(term, ranges)
                if (lo < 0 or hi >= size) and not _guards_keep_inside(term, size, lo, hi, stmt.guards):
                    violations.append((dim, term, size, lo, hi))
        if not violations:
            continue
        dim, term, size, lo, hi = violations[0]
        text = describe()
        interval = (
            f"{text}: index {dim} `{format_affine(term)}` ranges over [{lo}, {hi}] but dimension "
            f"{dim} of {name!r} has size {size} (valid 0..{size - 1})"
        )
        quasi = any(isinstance(t, Affine) and not t.is_linear for t in index)
        if not stmt.guards and not quasi:
            raise fail(interval)
        verdict = _exact_check(program, stmt, name, index)
        if verdict is None:
            raise fail(interval + " (the domain is too large for an exact check)")
        if verdict is not True:
            raise fail(f"{text} is out of bounds: {verdict}")


def _guards_keep_inside(
    term: Affine, size: int, lo: int, hi: int, guards: tuple[Constraint, ...]
) -> bool:
    """Whether guards that bound `term` itself (`term + c >= 0`, `c - term >= 0`, or `==`: a
    padded window's guards are its index) narrow its interval [lo, hi] into 0..size-1: every
    point of the domain satisfies every guard, so the access is inside there (exact, no count)."""
    for g in guards:
        below, above = g.expr - term, g.expr + term
        if not below.terms:  # term + c >= 0 (== 0): term >= -c
            lo = max(lo, -below.const)
            if g.equality:
                hi = min(hi, -below.const)
        elif not above.terms:  # c - term >= 0 (== 0): term <= c
            hi = min(hi, above.const)
            if g.equality:
                lo = max(lo, above.const)
    return 0 <= lo and hi < size


def _exact_check(
    program: Program, stmt: Stmt, name: str, index: tuple[IndexTerm, ...]
) -> bool | str | None:
    """True when the access stays in bounds over the guarded domain, a description of a violating
    point when it does not, None when no exact method is affordable."""
    try:
        # through sys.modules, so that a missing islpy (or a test) can switch the module off
        polyhedral = importlib.import_module("solar.ir.polyhedral")
    except ImportError:
        polyhedral = None
    access_in_bounds = getattr(polyhedral, "access_in_bounds", None)
    if access_in_bounds is None:
        return _enumerate(program, stmt, name, index)
    if access_in_bounds(program, stmt, name, index):
        return True
    # isl says no but gives no witness; enumerate for one where affordable
    witness = _enumerate(program, stmt, name, index)
    if isinstance(witness, str):
        return witness
    return "the exact (polyhedral) check found a point of the domain outside the tensor"


def _enumerate(
    program: Program, stmt: Stmt, name: str, index: tuple[IndexTerm, ...]
) -> bool | str | None:
    extents = program.extents(stmt)
    shape = tuple(extents[v] for v in stmt.loop_vars)
    if math.prod(int(n) for n in shape) > ENUMERATION_LIMIT:  # exact: extents may exceed int64
        return None
    # int64 wraps silently: exact Python integers where a partial sum may leave its range
    box = {v: (0, max(int(n) - 1, 0)) for v, n in extents.items()}
    exprs = [t for t in index if isinstance(t, Affine)] + [g.expr for g in stmt.guards]
    wide = any(magnitude(e, box) >= 2**62 for e in exprs)
    env = {}
    for axis, v in enumerate(stmt.loop_vars):
        view = [1] * len(shape)
        view[axis] = shape[axis]
        values = np.arange(shape[axis], dtype=np.int64)
        env[v] = (values.astype(object) if wide else values).reshape(view)
    inside = np.ones(shape, dtype=bool)
    for guard in stmt.guards:
        inside &= np.broadcast_to(guard.holds(env), shape)
    for dim, (term, size) in enumerate(zip(index, program.shape(name), strict=True)):
        if not isinstance(term, Affine):
            continue
        values = np.broadcast_to(term.evaluate(env), shape)
        bad = inside & ((values < 0) | (values >= size))
        if bad.any():
            point = tuple(int(x) for x in np.argwhere(bad)[0])
            at = ", ".join(f"{v}={x}" for v, x in zip(stmt.loop_vars, point, strict=True))
            value = int(values[point])
            return (
                f"index {dim} `{format_affine(term)}` = {value} at {at or 'the only point'} "
                f"(dimension {dim} of {name!r} has size {size})"
            )
    return True
