"""The polyhedral view of IR statements: exact point counts of iteration domains and exact
footprints of accesses, computed by isl (islpy-barvinok) without enumerating points. The only module
of solar that imports islpy.

Terms. The *iteration domain* of a statement is the set of integer points of its loop variables
(0 <= v < extent for each loop) that satisfy its guards. An *access* is a Load of the statement's
value or the Store of its target; its *footprint* is the number of DISTINCT tensor elements it
touches over the domain. A tensor's footprint over several statements is the size of the union of
those sets.

Sizes. Program symbols are substituted by their values by default, so results are exact Python ints.
With `parametric=True` they stay isl parameters and the result is isl's piecewise quasi-polynomial
as text, e.g. "[N] -> { (1/2 * N + 1/2 * N^2) : N > 0 }".

Indirect (data-dependent) index terms. The elements an indirect dimension touches depend on the
index data, which an analysis does not see. `indirect="min"` (the default) lets the dimension
contribute exactly one element: the smallest footprint any index data can produce (the footprint is
then the number of distinct values of the other, affine, dimensions), so byte counts built on it
stay LOWER bounds. `indirect="max"` lets it cover the whole dimension (0 <= x < size): an upper
bound, assuming the data stays in bounds (the interpreter checks that it does)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from solar.errors import NotAffineError, SolarError
from solar.ir.affine import Affine, Atom, Constraint, FloorDiv, Mod, clip_ranges, is_box, var
from solar.ir.boxes import Access, IndirectMode, image_box, indirect_values, union_size
from solar.ir.nodes import IndexTerm, Indirect, Load, Program, Size, Stmt, Store, term_variables
from solar.ir.products import Part, independent_parts


class _Islpy:
    """islpy, imported on first use: an analysis that counts nothing with isl (a single op) does
    not pay its import (~0.3 s)."""

    def __getattr__(self, name: str) -> object:
        import islpy

        globals()["isl"] = islpy
        return getattr(islpy, name)


isl: Any = _Islpy()


# Words of isl's set syntax: a variable with one of these names is renamed in the isl text.
_ISL_WORDS = frozenset(
    {"and", "or", "not", "xor", "implies", "exists", "floor", "ceil", "mod", "min", "max"}
    | {"true", "false", "infty", "NaN", "rat"}
)


# ---- isl text of IR pieces -----------------------------------------------------------------------


class _Names:
    """How IR names appear in isl text: loop variables (renamed off isl keywords), and symbols as
    their values or as isl parameters."""

    def __init__(self, program: Program, stmt: Stmt, parametric: bool) -> None:
        self.program = program
        self.parametric = parametric
        self.loop = {v: (f"{v}_" if v in _ISL_WORDS else v) for v in stmt.loop_vars}
        self.symbols = dict(program.symbols)
        self.params: set[str] = set()  # the symbols the text mentions (parametric mode)

    def name(self, v: str) -> str:
        if v in self.loop:
            return self.loop[v]
        if v in self.symbols:
            if not self.parametric:
                return str(self.symbols[v])
            self.params.add(v)
            return v
        raise NotAffineError(
            f"index variable {v!r} is neither a loop variable nor a program symbol"
        )

    def size(self, s: Size) -> str:
        if isinstance(s, int):
            return str(s)
        self.program.size(s)  # raises IRVerifyError for an unbound symbol
        return self.name(s)


def _atom(atom: Atom, names: _Names) -> str:
    match atom:
        case str():
            return names.name(atom)
        case FloorDiv(expr, d):
            return f"floor(({_affine(expr, names)})/{d})"
        case Mod(expr, d):
            return f"(({_affine(expr, names)}) mod {d})"
    raise TypeError(atom)


def _affine(expr: Affine, names: _Names) -> str:
    """`2*i - j + 3` in isl syntax (signs folded, so the text stays readable in error messages)."""
    terms = [(c, _atom(a, names)) for a, c in expr.terms]
    if expr.const or not terms:
        terms.append((expr.const, ""))
    text = ""
    for n, (coeff, body) in enumerate(terms):
        mag = str(abs(coeff)) if not body else body if abs(coeff) == 1 else f"{abs(coeff)}*{body}"
        sign = ("-" if coeff < 0 else "") if n == 0 else (" - " if coeff < 0 else " + ")
        text += sign + mag
    return text


def _constraint(c: Constraint, names: _Names) -> str:
    return f"{_affine(c.expr, names)} {'=' if c.equality else '>='} 0"


def _domain_constraints(stmt: Stmt, names: _Names) -> list[str]:
    bounds = [f"0 <= {names.loop[lp.var]} < {names.size(lp.extent)}" for lp in stmt.loops]
    return bounds + [_constraint(g, names) for g in stmt.guards]


def _space(stmt: Stmt, names: _Names) -> str:
    return "[" + ", ".join(names.loop[v] for v in stmt.loop_vars) + "]"


def _tuple_name(tensor: str) -> str:
    ok = tensor.isidentifier() and tensor not in _ISL_WORDS
    return tensor if ok else "T"


def _braces(tuples: str, constraints: list[str]) -> str:
    """`{ tuples : c1 and c2 ... }`, or `{ tuples }` with no constraints."""
    return f"{{ {tuples} : {' and '.join(constraints)} }}" if constraints else f"{{ {tuples} }}"


def _with_params(body: str, params: Iterable[str]) -> str:
    params = sorted(params)
    return f"[{', '.join(params)}] -> {body}" if params else body


def domain_text(program: Program, stmt: Stmt, parametric: bool = False) -> str:
    """The isl set of the statement's iteration domain, e.g. `{ [i, j] : 0 <= i < 8 and ... }`."""
    names = _Names(program, stmt, parametric)
    body = _braces(_space(stmt, names), _domain_constraints(stmt, names))
    return _with_params(body, names.params)


def _access_text(
    program: Program,
    stmt: Stmt,
    tensor: str,
    index: tuple[IndexTerm, ...],
    names: _Names,
    indirect: IndirectMode,
    tuple_name: str | None = None,
) -> str:
    """The body of the isl map from the domain to the elements an access touches (no parameters).
    `tuple_name` replaces the tensor's name: counts do not depend on it, and the texts of the
    same access pattern on different tensors (identical layers) then share one cached count."""
    shape = program.tensor(tensor).shape
    outs = [f"_o{d}" for d in range(len(index))]
    cons = []
    for d, (o, term) in enumerate(zip(outs, index)):
        if isinstance(term, Indirect) and indirect == "min":
            n = indirect_values(index, bool(stmt.guards))
            cons.append(f"{o} = 0" if n == 1 else f"0 <= {o} < {n}")
        elif isinstance(term, Indirect):
            cons.append(f"0 <= {o} < {names.size(shape[d])}")
        else:
            cons.append(f"{o} = {_affine(term, names)}")
    cons += _domain_constraints(stmt, names)
    name = tuple_name or _tuple_name(tensor)
    return _braces(f"{_space(stmt, names)} -> {name}[{', '.join(outs)}]", cons)


def access_text(
    program: Program,
    stmt: Stmt,
    access: Access,
    parametric: bool = False,
    indirect: IndirectMode = "min",
) -> str:
    """The isl map `{ [loop vars] -> T[element] : domain }` of one access of `stmt`."""
    names = _Names(program, stmt, parametric)
    body = _access_text(program, stmt, access.tensor, access.index, names, indirect)
    return _with_params(body, names.params)


# ---- counting ------------------------------------------------------------------------------------


def _to_int(count: isl.PwQPolynomial, what: str) -> int:
    """The exact integer value of a constant count (isl's Val has unbounded precision)."""
    count = count.coalesce()
    pieces = count.get_pieces()
    if not pieces:
        return 0  # isl's zero polynomial has no pieces: the set is empty
    if len(pieces) != 1 or count.dim(isl.dim_type.param) != 0:
        raise SolarError(f"the count of {what} is not a single constant piece: {count}")
    value = pieces[0][1].get_constant_val()
    if not value.is_int():
        raise SolarError(f"the count of {what} is not a finite integer: {count}")
    return int(value.to_str())  # via text: no round trip through a C long or a float


@functools.lru_cache(maxsize=1 << 16)
def count_points(set_text: str) -> int:
    """Exact number of integer points of an isl set given as text (no parameters)."""
    return _to_int(isl.Set(set_text).card(), set_text)


@functools.lru_cache(maxsize=4096)
def count_points_parametric(set_text: str) -> str:
    """isl's piecewise quasi-polynomial counting the points of a set with parameters, as text."""
    return str(isl.Set(set_text).card().coalesce())


@functools.lru_cache(maxsize=1 << 16)
def _image_text(map_texts: tuple[str, ...]) -> str:
    """The union of the ranges of some maps into one tensor, as the text of one isl set."""
    image: isl.Set | None = None
    for text in map_texts:
        r = isl.Map(text).range()
        image = r if image is None else image.union(r)
    assert image is not None
    return str(image.coalesce())


@functools.lru_cache(maxsize=1 << 16)
def _injective(map_text: str) -> bool:
    """Whether the map (no parameters) sends distinct domain points to distinct elements."""
    return bool(isl.Map(map_text).is_injective())


def _count(set_text: str, parametric: bool) -> int | str:
    return count_points_parametric(set_text) if parametric else count_points(set_text)


# ---- public API ----------------------------------------------------------------------------------


def domain_size(program: Program, stmt: Stmt, parametric: bool = False) -> int | str:
    """Number of integer points of the statement's iteration domain, guards included. A box (no
    guard, or guards that each bound one variable) is the product of its ranges; any other domain
    is counted by isl, once per canonical domain (loop variables named by position, so the
    statements of identical layers share one count)."""
    if parametric:
        return _count(domain_text(program, stmt, parametric), parametric)
    box = _box_size(program, stmt)
    return box if box is not None else count_points(_canonical_domain_text(program, stmt))


def _box_size(program: Program, stmt: Stmt) -> int | None:
    """The point count when every guard is linear in at most one loop variable (None otherwise)."""
    if not is_box(stmt.guards, set(stmt.loop_vars)):
        return None
    box = clip_ranges({lp.var: (0, program.size(lp.extent) - 1) for lp in stmt.loops}, stmt.guards)
    if box is None:
        return 0
    n = 1
    for lo, hi in box.values():
        n *= max(0, hi - lo + 1)
    return n


def _canonical_domain_text(program: Program, stmt: Stmt) -> str:
    """`domain_text` with the loop variables renamed `_v0, _v1, ...` in loop order."""
    rename = {v: f"_v{k}" for k, v in enumerate(stmt.loop_vars)}
    mapping = {v: var(n) for v, n in rename.items()}
    names = _Names(program, stmt, parametric=False)
    names.loop = {n: n for n in rename.values()}
    bounds = [f"0 <= {rename[lp.var]} < {names.size(lp.extent)}" for lp in stmt.loops]
    guards = [_constraint(g.substitute(mapping), names) for g in stmt.guards]
    return _braces("[" + ", ".join(rename.values()) + "]", bounds + guards)


def access_footprint(
    program: Program,
    stmt: Stmt,
    access: Access,
    indirect: IndirectMode = "min",
    parametric: bool = False,
) -> int | str:
    """Number of distinct elements of `access.tensor` that `access` (a Load of `stmt` or its Store)
    touches over the statement's domain. See the module docstring for `indirect`."""
    return tensor_footprint_of(program, [(stmt, access)], indirect, parametric)


def tensor_footprint(
    program: Program,
    tensor: str,
    kind: Literal["read", "write"],
    stmts: Iterable[Stmt] | None = None,
    indirect: IndirectMode = "min",
    parametric: bool = False,
) -> int | str:
    """Number of distinct elements of `tensor` read (every Load of it, including loads inside
    indirect indices) or written (the Store) by `stmts` (default: all statements of the program).

    The target of an accumulating update (+=, max=, ...) is read-modify-written; it counts as a
    write only. A tensor no statement accesses has footprint 0."""
    program.tensor(tensor)  # raises for an unknown name
    if kind not in ("read", "write"):
        raise SolarError(f"footprint kind must be 'read' or 'write', got {kind!r}")
    accesses: list[tuple[Stmt, Access]] = []
    for stmt in program.stmts if stmts is None else stmts:
        if kind == "write":
            if stmt.target.tensor == tensor:
                accesses.append((stmt, stmt.target))
        else:
            accesses += [(stmt, ld) for ld in stmt.loads() if ld.tensor == tensor]
    if not accesses:
        return "0" if parametric else 0
    return tensor_footprint_of(program, accesses, indirect, parametric)


def tensor_footprint_of(
    program: Program,
    accesses: Iterable[tuple[Stmt, Access]],
    indirect: IndirectMode = "min",
    parametric: bool = False,
) -> int | str:
    """Number of distinct elements in the union of the images of (statement, access) pairs, all
    accesses of one tensor: exact, or a lower bound for a union of quasi-affine maps that isl is
    not asked to count (`footprint_range`)."""
    accesses = _one_tensor(accesses)
    if not parametric:
        return footprint_range(program, accesses, indirect)[0]
    bodies: list[str] = []
    params: set[str] = set()
    for stmt, access in accesses:
        names = _Names(program, stmt, parametric)
        bodies.append(_access_text(program, stmt, access.tensor, access.index, names, indirect, "T"))
        params |= names.params
    # Every map gets the same parameter list, so that isl can unite their images.
    texts = tuple(sorted(_with_params(b, params) for b in bodies))
    return _count(_image_text(texts), parametric)


def _one_tensor(accesses: Iterable[tuple[Stmt, Access]]) -> list[tuple[Stmt, Access]]:
    accesses = list(accesses)
    tensors = {access.tensor for _, access in accesses}
    if len(tensors) != 1:
        raise SolarError(f"a footprint is of one tensor; the accesses touch {sorted(tensors)}")
    return accesses


def footprint_range(
    program: Program, accesses: Iterable[tuple[Stmt, Access]], indirect: IndirectMode = "min"
) -> tuple[int, int]:
    """(lower, upper) bounds on the distinct elements in the union of the images of (statement,
    access) pairs of one tensor; equal (the exact count) unless `_union_of_maps` bounds the
    union."""
    accesses = _one_tensor(accesses)
    boxes = [image_box(program, stmt, access, indirect) for stmt, access in accesses]
    if all(b is not None for b in boxes):
        count = union_size(boxes)
        if count is not None:
            return count, count
    numel = program.numel(accesses[0][1].tensor)
    return _union_of_maps(program, _reduced_maps(program, accesses, indirect), numel)


def _reduced_maps(
    program: Program, accesses: list[tuple[Stmt, Access]], indirect: IndirectMode
) -> dict[str, tuple[Stmt, Access]]:
    """The distinct maps of the accesses with a non-empty domain, as canonical isl text (loop
    variables `_v0, _v1, ...` in loop order, tensor `T`), each with its statement cut to the loops
    its index or guards use: the other loops only repeat the same image."""
    out: dict[str, tuple[Stmt, Access]] = {}
    for stmt, access in accesses:
        used = set().union(*(term_variables(t) for t in access.index))
        if any(isinstance(t, Indirect) for t in access.index):
            used = set(stmt.loop_vars)  # its count depends on whether guards remain: none cut
        cut, rest = _split(stmt, used)
        if _empty(program, rest):
            continue  # an empty domain touches nothing
        names = _Names(program, cut, False)
        names.loop = {v: f"_v{k}" for k, v in enumerate(cut.loop_vars)}
        text = _access_text(program, cut, access.tensor, access.index, names, indirect, "T")
        out.setdefault(text, (cut, access))
    return out


def _split(stmt: Stmt, used: set[str]) -> tuple[Stmt, Stmt]:
    """The statement's loops and guards linked to the variables `used` (directly, or through
    guards that mention both), and the others: the domain is the product of the two parts."""
    linked = set(used)
    while True:
        more = {v for g in stmt.guards if g.variables & linked for v in g.variables} - linked
        if not more:
            break
        linked |= more
    parts = [
        dataclasses.replace(
            stmt,
            loops=tuple(lp for lp in stmt.loops if (lp.var in linked) == keep),
            guards=tuple(g for g in stmt.guards if bool(g.variables & linked) == keep),
        )
        for keep in (True, False)
    ]
    return parts[0], parts[1]


def _empty(program: Program, stmt: Stmt) -> bool:
    """Whether the statement's domain has no point (a box is checked without isl)."""
    box = _box_size(program, stmt)
    if box is not None:
        return box == 0
    return bool(isl.Set(_canonical_domain_text(program, stmt)).is_empty())


def _union_of_maps(
    program: Program, maps: dict[str, tuple[Stmt, Access]], numel: int
) -> tuple[int, int]:
    """(lower, upper) bounds on the distinct elements in the union of the images of `maps`
    (`_reduced_maps`; `numel`: the tensor's size). Exact, except for a union of several maps that
    hold more than EXACT_QUASI_ATOMS distinct floor-divisions and mods (window partitions, rolls),
    whose union barvinok may take hours to count. There the lower bound is the sum of the
    images of a pairwise disjoint family of the maps, chosen greedily from the largest image down
    (the union itself when all images are pairwise disjoint; never below the largest image), and
    the upper bound the sum of all images, at most `numel` (docs/BOUNDS.md §3, "Footprints")."""
    if not maps:
        return 0, 0
    texts = tuple(sorted(maps))
    if len(texts) > 1 and len(frozenset().union(*map(_quasi_atoms, maps.values()))) <= EXACT_QUASI_ATOMS:
        count = count_points(_image_text(texts))
        return count, count
    sizes = {text: _image_size(program, text, *maps[text]) for text in texts}
    family: list[str] = []
    for text in sorted(texts, key=lambda t: (-sizes[t], t)):
        if all(_disjoint(text, other) for other in family):
            family.append(text)
    lower = sum(sizes[t] for t in family)
    return lower, lower if len(family) == len(texts) else min(numel, sum(sizes.values()))


def _image_size(program: Program, text: str, stmt: Stmt, access: Access) -> int:
    """Distinct elements one map touches: the product over its independent parts
    (solar.ir.products), each counted alone. A map that sends distinct points to distinct elements
    touches as many as its domain has points: isl decides injectivity (an emptiness test) far
    faster than it counts an image with floor-divisions (window partitions: minutes)."""
    parts = independent_parts(stmt, access.index)
    if parts is not None:
        return math.prod(_part_size(program, part, access) for part in parts)
    if not any(isinstance(t, Indirect) for t in access.index) and _injective(text):
        return int(domain_size(program, stmt))
    return count_points(_image_text((text,)))


def _part_size(program: Program, part: Part, access: Access) -> int:
    """Distinct elements of the dimensions `part.dims` that the part's loops touch."""
    stmt, index = part.stmt, tuple(access.index[d] for d in part.dims)
    if not stmt.guards and len(stmt.loops) == 1 and len(index) == 1 and index[0].terms and index[0].is_linear:
        return max(0, program.size(stmt.loops[0].extent))  # a*v + c with a != 0: one-to-one
    if not index:
        return 1 if domain_size(program, stmt) else 0
    names = _Names(program, stmt, False)
    names.loop = {v: f"_v{k}" for k, v in enumerate(stmt.loop_vars)}
    text = _access_text(program, stmt, access.tensor, index, names, "min", "T")
    return _image_size(program, text, stmt, Load(access.tensor, index))


# A union whose maps hold at most this many distinct floor-divisions and mods in all (each one an
# existential variable of the isl set, barvinok's cost driver) is counted exactly: an interpolation's
# floor(i*3/7) and floor(i*3/7) + 1 hold one; SwinV2's window-partition and roll pieces dozens.
EXACT_QUASI_ATOMS = 2


def _quasi_atoms(pair: tuple[Stmt, Access]) -> frozenset:
    """The floor-divisions and mods (nested ones too) in the access's index terms and guards."""
    stmt, access = pair
    todo = [t for t in access.index if isinstance(t, Affine)] + [g.expr for g in stmt.guards]
    out: set = set()
    while todo:
        for atom, _ in todo.pop().terms:
            if not isinstance(atom, str):
                out.add(atom)
                todo.append(atom.expr)
    return frozenset(out)


@functools.lru_cache(maxsize=1 << 16)
def _disjoint(a: str, b: str) -> bool:
    """Whether the images of two maps (no parameters) share no element (an emptiness test)."""
    return bool(isl.Map(a).range().intersect(isl.Map(b).range()).is_empty())


def access_in_bounds(
    program: Program, stmt: Stmt, tensor: str, index: tuple[IndexTerm, ...]
) -> bool:
    """True when every point of the statement's domain maps `index` inside `tensor`'s shape.

    Indirect dimensions cannot be checked here (the data decides); they are taken to be in bounds,
    and the interpreter checks them at run time."""
    if len(index) != len(program.shape(tensor)):
        return False
    return out_of_bounds_point(program, stmt, tensor, index) is None


def out_of_bounds_point(
    program: Program, stmt: Stmt, tensor: str, index: tuple[IndexTerm, ...]
) -> dict[str, int] | None:
    """A point of the statement's domain (loop variable -> value) where `index` falls outside
    `tensor`, or None when there is none. Indirect dimensions are taken to be in bounds."""
    names = _Names(program, stmt, parametric=False)
    shape = program.shape(tensor)
    if len(index) != len(shape):
        raise SolarError(f"{tensor} has rank {len(shape)}, indexed with {len(index)} indices")
    body = _access_text(program, stmt, tensor, index, names, "max", "T")
    outs = ", ".join(f"_o{d}" for d in range(len(shape)))
    box = _braces(f"T[{outs}]", [f"0 <= _o{d} < {s}" for d, s in enumerate(shape)])
    point = _outside_point(body, box)
    return None if point is None else dict(zip(stmt.loop_vars, point))


@functools.lru_cache(maxsize=1 << 16)
def _outside_point(map_text: str, box_text: str) -> tuple[int, ...] | None:
    """Coordinates of one domain point of the map whose image lies outside the box, if any."""
    outside = isl.Map(map_text).intersect_range(isl.Set(box_text).complement()).domain()
    if outside.is_empty():
        return None
    point = outside.sample_point()
    n = outside.dim(isl.dim_type.set)
    return tuple(int(point.get_coordinate_val(isl.dim_type.set, d).to_str()) for d in range(n))


# ---- parametric counts as pieces (for solar.symbolic) --------------------------------------------

# One affine constraint over the parameters: ({parameter name, or 1 for the constant: coefficient
# as text}, is an equality); `sum >= 0`, or `sum = 0` when it is an equality.
ParamConstraint = tuple[tuple[tuple[str | int, str], ...], bool]


@dataclass(frozen=True, slots=True)
class CountPiece:
    """One piece of a parametric count: isl's quasi-polynomial as text (`(1/2 * S + 1/2 * S^2)`)
    and where it holds, a disjunction of conjunctions of affine constraints on the parameters
    (None: everywhere the parameters are >= 1)."""

    polynomial: str
    condition: tuple[tuple[ParamConstraint, ...], ...] | None


def _context(params: tuple[str, ...]) -> isl.Set:
    ge = " and ".join(f"{p} >= 1" for p in params)
    return isl.Set(f"[{', '.join(params)}] -> {{ : {ge} }}")


def _pieces(count: isl.PwQPolynomial, params: tuple[str, ...]) -> tuple[CountPiece, ...]:
    context = _context(params)
    count = count.intersect_params(context).gist_params(context).coalesce()
    out = []
    for dom, qp in count.get_pieces():
        text = str(qp)
        poly = text.split("{", 1)[1].rsplit("}", 1)[0].strip() if "{" in text else text
        dom = dom.gist_params(context)
        if dom.plain_is_universe():
            out.append(CountPiece(poly, None))
            continue
        terms = []
        for bs in dom.get_basic_sets():
            if bs.dim(isl.dim_type.div):
                raise SolarError(
                    f"a count's piece has a quasi-affine condition ({dom}); not supported"
                )
            terms.append(tuple(
                (
                    tuple((k, v.to_str()) for k, v in
                          c.get_coefficients_by_name(isl.dim_type.param).items()),
                    c.is_equality(),
                )
                for c in bs.get_constraints()
            ))
        out.append(CountPiece(poly, tuple(terms)))
    return tuple(out)


def set_count_pieces(set_text: str, params: tuple[str, ...]) -> tuple[CountPiece, ...]:
    """The points of a parametric set (isl text over `params`, each taken >= 1), by pieces."""
    return _pieces(isl.Set(set_text).card(), params)


def image_count_pieces(map_texts: tuple[str, ...], params: tuple[str, ...]) -> tuple[CountPiece, ...]:
    """The distinct elements in the union of the ranges of parametric maps (isl text over
    `params`, each taken >= 1), by pieces."""
    image = None
    for text in map_texts:
        r = isl.Map(text).range()
        image = r if image is None else image.union(r)
    return _pieces(image.card(), params)
