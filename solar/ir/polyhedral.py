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

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import islpy as isl

from solar.errors import NotAffineError, SolarError
from solar.ir.affine import Affine, Atom, Constraint, FloorDiv, Mod, clip_ranges, is_box, var
from solar.ir.nodes import IndexTerm, Indirect, Load, Program, Size, Stmt, Store, term_variables

IndirectMode = Literal["min", "max"]
Access = Load | Store

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


def indirect_values(index: tuple[IndexTerm, ...], guarded: bool) -> int:
    """How many values an indirect dimension takes in "min" mode: its `distinct` claim when the
    access is a product of that dimension and the others (one indirect term, no guards, no loop
    variable shared between the indirect value and the other dimensions: every value it takes
    then meets every element the other dimensions touch), else 1 (docs/BOUNDS.md, MoE routing)."""
    indirect = [t for t in index if isinstance(t, Indirect)]
    if guarded or len(indirect) != 1 or indirect[0].distinct == 1:
        return 1
    others: set[str] = set()
    for t in index:
        if not isinstance(t, Indirect):
            others |= t.variables
    return 1 if term_variables(indirect[0]) & others else indirect[0].distinct


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
    accesses of one tensor."""
    accesses = list(accesses)
    tensors = {access.tensor for _, access in accesses}
    if len(tensors) != 1:
        raise SolarError(f"a footprint is of one tensor; the accesses touch {sorted(tensors)}")
    if not parametric:
        boxes = [_image_box(program, stmt, access, indirect) for stmt, access in accesses]
        if all(b is not None for b in boxes):
            count = _union_size(boxes)
            if count is not None:
                return count
        if len(accesses) == 1 and not any(isinstance(t, Indirect) for t in accesses[0][1].index):
            # An access that maps distinct points to distinct elements touches as many elements
            # as its domain has points: isl decides injectivity (an emptiness test) far faster
            # than it counts an image with floor-divisions (window partitions: minutes).
            stmt, access = accesses[0]
            names = _Names(program, stmt, False)
            if _injective(_access_text(program, stmt, access.tensor, access.index, names, indirect, "T")):
                return int(domain_size(program, stmt))
    bodies: list[str] = []
    params: set[str] = set()
    for stmt, access in accesses:
        names = _Names(program, stmt, parametric)
        bodies.append(_access_text(program, stmt, access.tensor, access.index, names, indirect, "T"))
        params |= names.params
    # Every map gets the same parameter list, so that isl can unite their images.
    texts = tuple(sorted(_with_params(b, params) for b in bodies))
    return _count(_image_text(texts), parametric)


# ---- images that are boxes: counted without isl --------------------------------------------------

# A progression {start + step*k : 0 <= k < count} per tensor dimension; their product is an image.
Box = tuple[tuple[int, int, int], ...]
UNION_BUDGET = 1 << 16  # sweep steps before a union of boxes is left to isl


def _image_box(program: Program, stmt: Stmt, access: Access, indirect: IndirectMode) -> Box | None:
    """The exact image of `access` over the statement's domain as a product of one arithmetic
    progression per dimension, when the domain is a box (guards bound one variable each) and every
    index dimension is a constant, an indirect term, or c*v + d with a loop variable v that no other
    dimension uses (then the image is the product of the ranges of those dimensions, each a
    progression). None otherwise. An empty domain gives the empty image (a zero count)."""
    if not is_box(stmt.guards, set(stmt.loop_vars)):
        return None
    ranges = clip_ranges({lp.var: (0, program.size(lp.extent) - 1) for lp in stmt.loops}, stmt.guards)
    shape = program.shape(access.tensor)
    if ranges is None or any(lo > hi for lo, hi in ranges.values()):
        return tuple((0, 1, 0) for _ in access.index)
    out: list[tuple[int, int, int]] = []
    used: set[str] = set()
    for d, term in enumerate(access.index):
        if isinstance(term, Indirect):
            n = indirect_values(access.index, bool(stmt.guards)) if indirect == "min" else shape[d]
            out.append((0, 1, n))  # as _access_text writes it
            continue
        if not term.terms:
            out.append((term.const, 1, 1))
            continue
        if len(term.terms) != 1:
            return None
        atom, c = term.terms[0]
        if not isinstance(atom, str) or atom not in ranges or atom in used:
            return None
        used.add(atom)
        lo, hi = ranges[atom]
        first = term.const + c * (lo if c > 0 else hi)
        out.append((first, abs(c), hi - lo + 1))
    return tuple(out)


def _union_size(boxes: list[Box]) -> int | None:
    """The number of points in the union of `boxes` (exact), or None when a dimension mixes
    progressions of different steps or phases, or the sweep would exceed UNION_BUDGET steps."""
    live = [b for b in dict.fromkeys(boxes) if all(n > 0 for _, _, n in b)]
    if not live:
        return 0
    if len(live) == 1:
        return math.prod(n for _, _, n in live[0])
    rank = len(live[0])
    intervals: list[list[tuple[int, int]]] = [[] for _ in live]
    for d in range(rank):
        steps = {step for b in live for _, step, n in (b[d],) if n > 1}
        if len(steps) > 1:
            return None
        step = steps.pop() if steps else 1
        phase = {start % step for b in live for start, _, _ in (b[d],)}
        if len(phase) > 1:
            return None
        for k, b in enumerate(live):
            start, _, n = b[d]
            lo = start // step
            intervals[k].append((lo, lo + n))
    budget = [UNION_BUDGET]
    try:
        return _sweep(tuple(dict.fromkeys(tuple(iv) for iv in intervals)), budget, {})
    except _OverBudget:
        return None


class _OverBudget(Exception):
    pass


def _sweep(
    boxes: tuple[tuple[tuple[int, int], ...], ...], budget: list[int], memo: dict
) -> int:
    """Points in a union of half-open integer boxes: dimensions on which every box agrees are
    factored out; the remaining union is swept along the dimension with the fewest cut points."""
    if len(boxes) == 1:
        return math.prod(hi - lo for lo, hi in boxes[0])
    key = frozenset(boxes)
    if key in memo:
        return memo[key]
    rank = len(boxes[0])
    factor, rest = 1, []
    for d in range(rank):
        first = boxes[0][d]
        if all(b[d] == first for b in boxes):
            factor *= first[1] - first[0]
        else:
            rest.append(d)
    if not rest:
        return factor
    reduced = tuple(dict.fromkeys(tuple(b[d] for d in rest) for b in boxes))
    cuts = [sorted({x for b in reduced for x in b[k]}) for k in range(len(rest))]
    k = min(range(len(rest)), key=lambda k: len(cuts[k]))
    total = 0
    for lo, hi in zip(cuts[k], cuts[k][1:]):
        budget[0] -= len(reduced)
        if budget[0] < 0:
            raise _OverBudget
        active = tuple(
            dict.fromkeys(b[:k] + b[k + 1 :] for b in reduced if b[k][0] <= lo and hi <= b[k][1])
        )
        if active:
            total += (hi - lo) * (_sweep(active, budget, memo) if active[0] else 1)
    memo[key] = factor * total
    return memo[key]


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
