"""Sizes as symbols for a traced program: the model file is traced at several values of the
module-level integers the user names (`batch_size = 16` -> symbol B), the traced programs are
compared leaf by leaf, and every integer that varies (a loop extent, a tensor dimension, an index
offset or a guard constant) is fitted exactly, with rational coefficients, as a polynomial of
degree <= 1 in each symbol (monomials 1, B, S, B*S, ...). The result is the base program with each
varying integer replaced by a fresh size symbol `_zK` and its definition as a sympy expression.

Validity: the fit is checked at one more traced point than it needs; it is exact on the traced
lattice (multiples of the traced values, see `sample_points`). Sizes that round (strided
convolution and pooling outputs) are exact there too, and follow the rounding only on that lattice."""

from __future__ import annotations

import dataclasses
import itertools
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sympy

from solar.errors import SolarError, UsageError
from solar.ir.affine import Affine, FloorDiv, Mod
from solar.ir.nodes import Const, Origin, Program
from solar.ir.rewrite import rewrite

PREFIX = "_z"  # fresh size symbols: _z0, _z1, ... (never a name a frontend emits)


class SymbolicError(SolarError):
    """A program whose sizes cannot be made symbols (its structure changes with a size, a size
    multiplies a loop index, or a varying integer fits no polynomial)."""


@dataclass(frozen=True)
class SymbolicProgram:
    """`program`: the program traced at `base`, each size-dependent integer replaced by a symbol
    `_zK` bound to its traced value; `defs`: `_zK` -> its sympy expression in the user's symbols;
    `symbols`: user symbol -> (module global it sets, traced value)."""

    program: Program
    defs: Mapping[str, sympy.Expr]
    symbols: Mapping[str, tuple[str, int]]
    points: tuple[Mapping[str, int], ...]  # the symbol values traced (the first is the base)
    traced: tuple[Program, ...] = ()  # the program traced at each point (for checks)

    @property
    def base(self) -> dict[str, int]:
        return dict(self.points[0])


def parse_symbols(text: str) -> dict[str, str]:
    """`batch_size=B,seq=S` -> {"batch_size": "B", "seq": "S"} (module global -> symbol name)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, sym = (x.strip() for x in part.partition("="))
        if not eq or not name.isidentifier() or not sym.isidentifier() or sym.startswith("_"):
            raise UsageError(
                f"--symbolic {text!r}: write GLOBAL=SYMBOL pairs, e.g. batch_size=B,seq_len=S "
                "(GLOBAL a module-level integer of the model file, SYMBOL a name)"
            )
        if name in out or sym in out.values():
            raise UsageError(f"--symbolic {text!r}: {name} or {sym} is named twice")
        out[name] = sym
    if not out:
        raise UsageError("--symbolic needs at least one GLOBAL=SYMBOL pair, e.g. batch_size=B")
    return out


_GLOBAL = r"^{name}[ \t]*=[ \t]*(\d+)[ \t]*(#.*)?$"


def trace_file(
    path: str | Path, symbols: Mapping[str, str] | str, load_program: Callable[[Path], Program]
) -> SymbolicProgram:
    """The model file's program with the named module globals (GLOBAL -> SYMBOL, or the text
    `GLOBAL=SYMBOL,...`) as symbols; `load_program` lowers one copy of the file (the caller's
    frontend: solar.api passes its `load`)."""
    if isinstance(symbols, str):
        symbols = parse_symbols(symbols)
    if not isinstance(path, (str, Path)) or str(path).startswith("hf:"):
        raise UsageError("symbolic sizes need a model file whose sizes are module-level integers")
    return symbolic_program(path, dict(symbols), load_program)


def file_values(source: str, names: Mapping[str, str], path: str) -> dict[str, int]:
    """The traced value of each named module global: its one `NAME = <int>` line."""
    values = {}
    for name in names:
        found = re.findall(_GLOBAL.format(name=re.escape(name)), source, flags=re.MULTILINE)
        if len(found) != 1:
            raise UsageError(
                f"{Path(path).name}: --symbolic {name}=...: expected one module-level line "
                f"`{name} = <integer>`, found {len(found)}; name a size the file sets that way"
            )
        values[name] = int(found[0][0])
    return values


def with_values(source: str, values: Mapping[str, int]) -> str:
    for name, v in values.items():
        source = re.sub(
            _GLOBAL.format(name=re.escape(name)), f"{name} = {v}", source, flags=re.MULTILINE
        )
    return source


def sample_points(base: Mapping[str, int]) -> list[dict[str, int]]:
    """The base point; each symbol at 2x and 3x alone; each pair at 2x together (fits every
    monomial of degree <= 1 per symbol up to pairs); and every symbol at 3x (the check point)."""
    names = list(base)
    pts = [dict(base)]
    for n in names:
        pts += [{**base, n: 2 * base[n]}, {**base, n: 3 * base[n]}]
    for a, b in itertools.combinations(names, 2):
        pts.append({**base, a: 2 * base[a], b: 2 * base[b]})
    if len(names) > 1:
        pts.append({n: 3 * v for n, v in base.items()})
    return pts


# ---- leaves of a program -------------------------------------------------------------------------

Leaves = list[int]


def _leaves(program: Program) -> tuple[Leaves, list[Any]]:
    """The integer leaves of the program's tree (in a fixed order) and its structure (everything
    else: names, dtypes, ops); constants of expressions and origins are neither (a mean's 1/N and
    source lines may change with a size without changing what is counted)."""
    ints: Leaves = []
    shape: list[Any] = []

    def fn(node: Any) -> Any:
        match node:
            case Const() | Origin():
                return node
            case bool():
                shape.append(node)
                return node
            case int():
                ints.append(node)
                return node
            case str() | float():
                shape.append(node)
                return node
        if dataclasses.is_dataclass(node) or isinstance(node, tuple):
            shape.append(type(node).__name__ + (str(len(node)) if isinstance(node, tuple) else ""))
        else:
            shape.append(node)
        return None

    rewrite(dataclasses.replace(program, name="", symbols=()), fn)
    return ints, shape


def _replace_leaves(program: Program, new: Callable[[int, int], Any]) -> Program:
    """The program with its k-th integer leaf v replaced by new(k, v) (an int, or a symbol name
    where the IR allows one: sizes, affine constants)."""
    counter = itertools.count()

    def take(v: int) -> Any:
        return new(next(counter), v)

    def fn(node: Any) -> Any:
        match node:
            case Const() | Origin():
                return node
            case Affine(terms, c):
                out = []
                for atom, coeff in terms:
                    atom = fn(atom) if isinstance(atom, (FloorDiv, Mod)) else atom
                    k = take(coeff)
                    if not isinstance(k, int):
                        raise SymbolicError(
                            f"the coefficient {coeff} of loop index {atom} changes with the symbols "
                            "(a stride that is a size); isl needs affine indices, so symbolise a "
                            "size that is no stride"
                        )
                    out.append((atom, k))
                k = take(c)
                extra = ((k, 1),) if isinstance(k, str) else ()
                return Affine.make(tuple(out) + extra, 0 if isinstance(k, str) else k)
            case FloorDiv(expr, d) | Mod(expr, d):
                e = fn(expr)
                k = take(d)
                if not isinstance(k, int):
                    raise SymbolicError(
                        f"the divisor of an index (`// {d}` or `% {d}`) changes with the symbols: a "
                        "flattened dimension is split again (a reshape of B*S into B, S); isl "
                        "cannot divide by a parameter, so symbolise only one of those sizes"
                    )
                return type(node)(e, k)
            case bool() | str() | float():
                return node
            case int():
                return take(node)
        return None

    out = rewrite(dataclasses.replace(program, symbols=()), fn)
    return dataclasses.replace(out, symbols=program.symbols)


# ---- fitting -------------------------------------------------------------------------------------


def _monomials(syms: list[sympy.Symbol]) -> list[sympy.Expr]:
    out: list[sympy.Expr] = [sympy.Integer(1), *syms]
    out += [a * b for a, b in itertools.combinations(syms, 2)]
    return out


def _fit(
    values: list[int], points: list[dict[str, int]], syms: dict[str, sympy.Symbol]
) -> sympy.Expr:
    """The polynomial of `_monomials` through (point, value) for every point (exact rationals)."""
    monos = _monomials(list(syms.values()))
    rows = [[m.subs({syms[n]: v for n, v in p.items()}) for m in monos] for p in points]
    a = sympy.Matrix(rows)
    b = sympy.Matrix(values)
    try:
        sol, params = a.gauss_jordan_solve(b)
    except ValueError:
        raise SymbolicError("no polynomial fits") from None
    sol = sol.subs({p: 0 for p in params})
    return sympy.expand(sum(c * m for c, m in zip(sol, monos)))


def symbolic_program(
    path: str | Path,
    names: Mapping[str, str],
    load: Callable[[Path], Program],
) -> SymbolicProgram:
    """Trace the model file at `sample_points` of the named globals (via `load`, on a rewritten
    copy of the file) and fit every varying integer (see the module docstring)."""
    path = Path(path)
    source = path.read_text()
    traced = file_values(source, names, str(path))
    base = {names[g]: v for g, v in traced.items()}
    points = sample_points(base)
    programs: list[Program] = []
    with tempfile.TemporaryDirectory(prefix="solar-symbolic-") as tmp:
        copy = Path(tmp) / path.name
        trees = []
        for p in points:  # each trace is compared at once: a changing structure fails fast
            copy.write_text(with_values(source, {g: p[s] for g, s in names.items()}))
            programs.append(load(copy))
            trees.append(_leaves(programs[-1]))
            ints, shape = trees[-1]
            if shape == trees[0][1] and len(ints) == len(trees[0][0]):
                continue
            raise SymbolicError(
                f"{path.name}: the program's structure changes between {base} and {p} (different "
                "statements, loops or accesses); symbolic sizes need one structure at every size"
                + (
                    " (a size of 1 broadcasts: set the global to a larger value)"
                    if 1 in base.values()
                    else ""
                )
            )
    syms = {s: sympy.Symbol(s, integer=True, positive=True) for s in base}
    columns = list(zip(*(ints for ints, _ in trees)))
    fits: dict[int, sympy.Expr] = {}
    for k, col in enumerate(columns):
        if len(set(col)) == 1:
            continue
        expr = _fit(list(col), points, syms)
        ok = all(expr.subs({syms[n]: v for n, v in p.items()}) == c for p, c in zip(points, col))
        if not ok or not expr.free_symbols:
            raise SymbolicError(
                f"{path.name}: a size that takes the values {list(col)} at {points} is not a "
                "polynomial of degree <= 1 in each symbol; symbolise fewer sizes"
            )
        fits[k] = expr
    defs: dict[str, sympy.Expr] = {}
    by_expr: dict[sympy.Expr, str] = {}

    def new(k: int, v: int) -> Any:
        if k not in fits:
            return v
        name = by_expr.setdefault(fits[k], f"{PREFIX}{len(by_expr)}")
        defs[name] = fits[k]
        return name

    program = _replace_leaves(programs[0], new)
    bound = tuple(
        sorted(
            {n: int(e.subs({syms[s]: v for s, v in base.items()})) for n, e in defs.items()}.items()
        )
    )
    program = dataclasses.replace(program, symbols=tuple(program.symbols) + bound)
    symbols = {s: (g, traced[g]) for g, s in names.items()}
    return SymbolicProgram(program, defs, symbols, tuple(points), tuple(programs))
