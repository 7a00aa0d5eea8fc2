"""The Affine Loop IR: tensors, expressions, statements (a loop nest around one update) and programs.

Every node is a frozen value; edit with `dataclasses.replace`. Reads and writes are derived from the
statements, never stored. `str()` of any node goes through the one printer (solar.ir.printer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterator, Union

import numpy as np

from solar.ir.affine import Affine, Constraint
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
    plus an affine `offset`. Analyses treat it conservatively and say so."""

    value: Expr
    offset: Affine = Affine()


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


Expr = Union[Load, Const, Index, Call, Cast]


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
    framework lets this op run fp32 math on TF32 tensor cores (read from the framework's flags)."""

    op: str
    instance: int
    source: str = ""
    allow_tf32: bool = False


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
class Program:
    name: str
    tensors: tuple[TensorDecl, ...]
    stmts: tuple[Stmt, ...]
    symbols: tuple[tuple[str, int], ...] = ()
    _by_name: dict = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {t.name: t for t in self.tensors})

    def tensor(self, name: str) -> TensorDecl:
        try:
            return self._by_name[name]
        except KeyError:
            from solar.errors import IRVerifyError

            raise IRVerifyError(f"program {self.name!r} has no tensor {name!r}") from None

    def size(self, s: Size) -> int:
        """The integer value of a size (an int, or a symbol bound in `symbols`)."""
        if isinstance(s, (int, np.integer)):
            return int(s)
        for name, value in self.symbols:
            if name == s:
                return value
        from solar.errors import IRVerifyError

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
    match expr:
        case Call(_, args):
            return args
        case Cast(_, arg):
            return (arg,)
        case Load(_, index):
            return tuple(t.value for t in index if isinstance(t, Indirect))
    return ()


def walk(expr: Expr) -> Iterator[Expr]:
    """Pre-order walk over an expression tree, including loads inside indirect indices."""
    yield expr
    for child in children(expr):
        yield from walk(child)


def loads(expr: Expr) -> Iterator[Load]:
    return (e for e in walk(expr) if isinstance(e, Load))


def term_variables(term: IndexTerm) -> frozenset[str]:
    """The variables an index term depends on (for an indirect term: its offset's and those of
    every affine index inside its value)."""
    if isinstance(term, Affine):
        return term.variables
    out = set(term.offset.variables)
    for e in walk(term.value):
        match e:
            case Load(_, index):
                for t in index:
                    out |= term_variables(t) if isinstance(t, Indirect) else t.variables
            case Index(a):
                out |= a.variables
    return frozenset(out)


def map_indices(expr: Expr, fn) -> Expr:
    """Rebuild `expr` with `fn` applied to every affine index expression (in loads, Index and
    indirect offsets)."""
    match expr:
        case Load(tensor, index):
            return Load(
                tensor,
                tuple(
                    Indirect(map_indices(t.value, fn), fn(t.offset))
                    if isinstance(t, Indirect)
                    else fn(t)
                    for t in index
                ),
            )
        case Index(e):
            return Index(fn(e))
        case Call(op, args):
            return Call(op, tuple(map_indices(a, fn) for a in args))
        case Cast(dtype, arg):
            return Cast(dtype, map_indices(arg, fn))
    return expr
