"""The Affine Loop IR: tensors, expressions, statements (a loop nest around one update) and programs.

Every node is a frozen value; edit with `dataclasses.replace`. Reads and writes are derived from the
statements, never stored. `str()` of any node goes through the one printer (solar.ir.printer)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Iterator, Union

import numpy as np

from solar.errors import IRVerifyError
from solar.ir.affine import Affine, Constraint, lt, var
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp, Update

Size = Union[int, str]  # an integer, or the name of a symbol bound in Program.symbols


class Role(Enum):
    INPUT = "input"
    PARAM = "param"
    OUTPUT = "output"
    TEMP = "temp"


@dataclass(frozen=True, slots=True)
class TensorDecl:
    """A named tensor. `updates` (outputs only): the input or param whose storage this output
    overwrites in place (`x.index_copy_(...)`, a KV-cache row write); the program still computes it
    as a fresh tensor (its untouched elements copied from that input), and pricing treats both as
    one storage, so an identity copy between them moves nothing (docs/BOUNDS.md)."""

    name: str
    shape: tuple[Size, ...]
    dtype: DType
    role: Role
    updates: str | None = None


# ---- expressions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Indirect:
    """A data-dependent index: the integer value of `value` (typically a Load of an index tensor)
    plus an affine `offset`. Analyses treat it conservatively and say so.

    `distinct`: a fact the frontend proved about the data, that over the statement's domain the
    index takes at least this many distinct values (top-k expert ids: each token's k are distinct);
    the interpreter checks it, and footprints may count that many values (docs/BOUNDS.md §MoE)."""

    value: Expr
    offset: Affine = Affine()
    distinct: int = 1


IndexTerm = Union[Affine, Indirect]


@dataclass(frozen=True, slots=True)
class Load:
    tensor: str
    index: tuple[IndexTerm, ...]


@dataclass(frozen=True, slots=True)
class Const:
    value: float | int | bool


@dataclass(frozen=True, slots=True)
class Index:
    """The integer value of an affine index expression, used as data (iota, position masks)."""

    expr: Affine


@dataclass(frozen=True, slots=True)
class Call:
    op: ScalarOp
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Cast:
    dtype: DType
    arg: Expr


@dataclass(frozen=True, slots=True)
class Order:
    """An order statistic along loop variable `over` of the statement: the position p
    (0 <= p < extent of `over`) whose key (the value of `key` with `over` = p, the other variables
    as at the point) has rank `rank` in ascending order (descending: 0 is the greatest). Ties go to
    the lower position first (a stable order); NaN is greater than every number, as in PyTorch.

    It stands only as the whole value of an assignment (casts allowed) whose target does not use
    `over`: the value does not vary along `over`, so the statement reads the key at every p and
    writes one position per point of its other loops. `key` is a load (casts allowed): it computes
    nothing, so the statement's counted work is zero (docs/BOUNDS.md, order statistics)."""

    key: Expr
    over: str
    rank: Affine
    descending: bool = False


Expr = Union[Load, Const, Index, Call, Cast, Order]


# ---- statements and programs ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Loop:
    var: str
    extent: Size  # the loop runs var = 0 .. extent-1


@dataclass(frozen=True, slots=True)
class Store:
    """The element a statement updates. An Indirect term makes the store data-dependent (scatter,
    index_put): the element's position in that dim is the integer value of a load at the point."""

    tensor: str
    index: tuple[IndexTerm, ...]

    @property
    def is_affine(self) -> bool:
        return all(isinstance(t, Affine) for t in self.index)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a statement came from: the frontend op, the op instance it belongs to (statements of one
    instance form one eager kernel in the unfused bound), the user's source line, and whether the
    framework lets this op run fp32 math on TF32 tensor cores (read from the framework's flags), and
    the module path of the layer that called it (`layers.3.self_attn.q_proj`; "" at the top level)."""

    op: str
    instance: int
    source: str = ""
    allow_tf32: bool = False
    module: str = ""


@dataclass(frozen=True, slots=True)
class Stmt:
    """for loops [where guards]: target (update) value.

    With an accumulating update (+=, *=, max=, min=) the target must hold a value before the statement
    (an earlier statement initialises it); loop variables absent from the target index are reduced."""

    loops: tuple[Loop, ...]
    target: Store
    update: Update
    value: Expr
    guards: tuple[Constraint, ...] = ()
    origin: Origin | None = None

    @property
    def loop_vars(self) -> tuple[str, ...]:
        return tuple(loop.var for loop in self.loops)

    @property
    def reduced_vars(self) -> tuple[str, ...]:
        """Loop variables that do not appear in the target index (summed/maxed over)."""
        used: set[str] = set()
        for e in self.target.index:
            used |= term_variables(e)
        return tuple(v for v in self.loop_vars if v not in used)

    def loads(self) -> Iterator[Load]:
        """Every load of the statement, including loads inside indirect indices (of the value and
        of the store)."""
        yield from loads(self.value)
        for t in self.target.index:
            if isinstance(t, Indirect):
                yield from loads(t.value)

    def __str__(self) -> str:
        from solar.ir.printer import format_stmt

        return format_stmt(self)


@dataclass(frozen=True, slots=True)
class Seq:
    """for var in 0..extent in order: body — the body (statements and nested in-order loops) runs
    once per step, step after step, so a value written at step t is seen by every later step. Inside
    the body `var` is an index variable like any loop variable; each statement of the body is still
    evaluated over its whole domain at once. How recurrences (scans, RNNs, lax.scan) are written."""

    var: str
    extent: Size
    body: tuple[Stmt | Seq, ...]

    @property
    def loop(self) -> Loop:
        return Loop(self.var, self.extent)

    def __str__(self) -> str:
        from solar.ir.printer import format_node

        return format_node(self)


Node = Union[Stmt, Seq]


def nested(body: tuple[Node, ...], outer: tuple[Seq, ...] = ()) -> Iterator[tuple[tuple[Seq, ...], Stmt]]:
    """Every statement of `body` in program order, with its enclosing in-order loops (outermost
    first)."""
    for node in body:
        if isinstance(node, Seq):
            yield from nested(node.body, (*outer, node))
        else:
            yield outer, node


def flatten(seqs: tuple[Seq, ...], stmt: Stmt) -> Stmt:
    """The statement with its enclosing in-order loops in front of its own loops: the same points,
    the view in which a statement's work and footprints are counted (extent x body)."""
    if not seqs:
        return stmt
    return replace(stmt, loops=(*(s.loop for s in seqs), *stmt.loops))


Replacement = Union[Stmt, None, tuple[Stmt, ...], list]


def rebuild(body: tuple[Node, ...], new: Iterator[Replacement]) -> tuple[Node, ...]:
    """`body` with its statements, in program order, replaced by the items of `new`: a flattened
    statement (as `Program.stmts` gives them), None to drop one, or several to split one. The
    enclosing in-order loops of a statement are stripped again; where a pass narrowed one of them, a
    guard keeps the narrowing. An in-order loop left empty is dropped."""

    def go(nodes: tuple[Node, ...], outer: tuple[Seq, ...]) -> tuple[Node, ...]:
        out: list[Node] = []
        for node in nodes:
            if isinstance(node, Seq):
                inner = go(node.body, (*outer, node))
                if inner:
                    out.append(replace(node, body=inner))
                continue
            item = next(new)
            items = () if item is None else (item,) if isinstance(item, Stmt) else tuple(item)
            out.extend(_unflatten(outer, stmt) for stmt in items)
        return tuple(out)

    return go(body, ())


def _unflatten(seqs: tuple[Seq, ...], stmt: Stmt) -> Stmt:
    if not seqs:
        return stmt
    head, loops = stmt.loops[: len(seqs)], stmt.loops[len(seqs) :]
    guards = list(stmt.guards)
    for seq, loop in zip(seqs, head):
        assert loop.var == seq.var, f"a pass renamed in-order loop {seq.var} to {loop.var}"
        if loop.extent != seq.extent:  # narrowed: var < extent
            bound = var(loop.extent) if isinstance(loop.extent, str) else loop.extent
            guards.append(lt(var(loop.var), bound))
    return replace(stmt, loops=loops, guards=tuple(guards))


@dataclass(frozen=True, slots=True)
class Program:
    """Named tensors and a body of statements and in-order loops, run in order.

    `stmts` is the flattened view (each statement with its enclosing in-order loops in front of its
    own loops, see `flatten`): what counting analyses read. `nested()` gives each statement with its
    in-order loops; `with_stmts` rebuilds the body from an edited flattened view."""

    name: str
    tensors: tuple[TensorDecl, ...]
    body: tuple[Node, ...]
    symbols: tuple[tuple[str, int], ...] = ()
    _by_name: dict = field(default=None, init=False, repr=False, compare=False, hash=False)
    _flat: tuple = field(default=None, init=False, repr=False, compare=False, hash=False)
    _defuse: object = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {t.name: t for t in self.tensors})
        flat = tuple(flatten(seqs, s) for seqs, s in nested(self.body))
        object.__setattr__(self, "_flat", flat)

    @property
    def stmts(self) -> tuple[Stmt, ...]:
        return self._flat

    def nested(self) -> Iterator[tuple[tuple[Seq, ...], Stmt]]:
        return nested(self.body)

    def with_stmts(self, new: Iterator[Replacement] | tuple) -> Program:
        """The program with its flattened statements replaced one for one (None drops one, a tuple
        splits one); see `rebuild`."""
        items = list(new)
        if len(items) != len(self._flat):
            raise ValueError(f"with_stmts: {len(items)} statements for {len(self._flat)}")
        return replace(self, body=rebuild(self.body, iter(items)))

    def tensor(self, name: str) -> TensorDecl:
        try:
            return self._by_name[name]
        except KeyError:
            raise IRVerifyError(f"program {self.name!r} has no tensor {name!r}") from None

    def size(self, s: Size) -> int:
        """The integer value of a size (an int, or a symbol bound in `symbols`)."""
        if isinstance(s, (int, np.integer)):
            return int(s)
        for name, value in self.symbols:
            if name == s:
                return value
        raise IRVerifyError(f"program {self.name!r}: size symbol {s!r} is not bound")

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self.size(s) for s in self.tensor(name).shape)

    def numel(self, name: str) -> int:
        n = 1
        for s in self.shape(name):
            n *= s
        return n

    def nbytes(self, name: str) -> float:
        return self.numel(name) * self.tensor(name).dtype.bytes

    def extents(self, stmt: Stmt) -> dict[str, int]:
        return {loop.var: self.size(loop.extent) for loop in stmt.loops}

    def with_role(self, role: Role) -> tuple[TensorDecl, ...]:
        return tuple(t for t in self.tensors if t.role is role)

    def __str__(self) -> str:
        from solar.ir.printer import format_program

        return format_program(self)


# ---- traversal helpers (written once, used by every pass) ----------------------------------------


def children(expr: Expr) -> tuple[Expr, ...]:
    kind = type(expr)  # the node classes are final: dispatch on the exact class
    if kind is Call:
        return expr.args
    if kind is Cast:
        return (expr.arg,)
    if kind is Load:
        index = expr.index
        if all(type(t) is Affine for t in index):
            return ()
        return tuple(t.value for t in index if isinstance(t, Indirect))
    if kind is Order:
        return (expr.key,)
    return ()


def _preorder(expr: Expr) -> list[Expr]:
    """The nodes of `expr` in pre-order, built with a stack (no generator per level)."""
    out: list[Expr] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        out.append(e)
        kids = children(e)
        if kids:
            stack.extend(reversed(kids))
    return out


def walk(expr: Expr) -> Iterator[Expr]:
    """Pre-order walk over an expression tree, including loads inside indirect indices."""
    return iter(_preorder(expr))


def loads(expr: Expr) -> Iterator[Load]:
    return iter([e for e in _preorder(expr) if type(e) is Load])


def term_variables(term: IndexTerm) -> frozenset[str]:
    """The variables an index term depends on (for an indirect term: its offset's and those of
    every affine index inside its value)."""
    if isinstance(term, Affine):
        return term.variables
    out = set(term.offset.variables)
    for e in walk(term.value):
        if isinstance(e, Order):
            out |= {e.over} | e.rank.variables
        match e:
            case Load(_, index):
                for t in index:
                    out |= term_variables(t) if isinstance(t, Indirect) else t.variables
            case Index(a):
                out |= a.variables
    return frozenset(out)


def map_index_terms(index: tuple[IndexTerm, ...], fn) -> tuple[IndexTerm, ...]:
    """`fn` applied to every affine expression of an access's index terms."""
    return tuple(
        replace(t, value=map_indices(t.value, fn), offset=fn(t.offset))
        if isinstance(t, Indirect)
        else fn(t)
        for t in index
    )


def map_indices(expr: Expr, fn) -> Expr:
    """Rebuild `expr` with `fn` applied to every affine index expression (in loads, Index and
    indirect offsets)."""
    match expr:
        case Load(tensor, index):
            return Load(tensor, map_index_terms(index, fn))
        case Index(e):
            return Index(fn(e))
        case Call(op, args):
            return Call(op, tuple(map_indices(a, fn) for a in args))
        case Cast(dtype, arg):
            return Cast(dtype, map_indices(arg, fn))
        case Order(key, over, rank, descending):
            # the bound variable `over` is a loop variable: fn maps it like any other (a pass
            # that renames loops renames it); it must stay a bare variable (verify checks)
            renamed = fn(var(over))
            name = renamed.terms[0][0] if renamed.is_plain_var else over
            return Order(map_indices(key, fn), name, fn(rank), descending)
    return expr


def order_of(expr: Expr) -> Order | None:
    """The order statistic a statement's value is (under casts), or None."""
    while isinstance(expr, Cast):
        expr = expr.arg
    return expr if isinstance(expr, Order) else None
