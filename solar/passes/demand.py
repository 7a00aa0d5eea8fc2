"""Demand analysis (a backward pass): work whose result never reaches a program output costs
nothing.

- A temporary whose values never reach an output is dead: its writers are removed (unused
  outputs of multi-output ops such as max-pool indices or a variance nobody reads, dead branches).
- A temporary read only in part (`tril(A @ B)` reads the product where j <= i; a slice; a causal
  softmax reads the scores where j <= i) gets the demanded part as guards on its writers. The
  guards come from the readers' own guards and index ranges, moved into the tensor's index space;
  one is kept only when isl proves that every reader stays inside it, so no needed element is ever
  dropped. Readers with data-dependent indices demand the whole tensor.

Tensors are visited consumers first, so demand travels back through chains in one sweep."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace

from solar.ir.affine import Affine, Constraint, clip_ranges, is_box, value_range
from solar.ir.defuse import DefUse, defuse
from solar.ir.nodes import Indirect, Load, Program, Role, Stmt
from solar.passes.regions import axis, box_ranges, holds_on_box, is_empty, points, pull, with_guards

MAX_SWEEPS = 4


def restrict(program: Program) -> Program:
    du = defuse(program)
    # Restricting a statement changes its guards only, never its loads: the def-use stays valid.
    stmts: list[Stmt | None] = [s if s.target.tensor in du.live else None for s in program.stmts]
    # A tensor whose writers and readers are the statements it was last examined with gets the
    # same answer: later sweeps look only at tensors whose readers were restricted since.
    examined: dict[str, tuple[Stmt | None, ...]] = {}
    for _ in range(MAX_SWEEPS):
        changed = False
        for tensor in _temps_consumers_first(program, stmts):
            seen = _state(stmts, du, tensor)
            if _same(examined.get(tensor), seen):
                continue
            if _restrict_tensor(program, stmts, du, tensor):
                changed = True
            else:
                examined[tensor] = seen
        if not changed:
            break
    return program.with_stmts(stmts)


def _state(stmts: list[Stmt | None], index: DefUse, tensor: str) -> tuple[Stmt | None, ...]:
    """The statements writing and reading `tensor` now (None for a removed one); compared by
    identity, and held, so that no identity is reused while it is compared."""
    return tuple(stmts[i] for i in (*index.writers.get(tensor, ()), *index.readers.get(tensor, ())))


def _same(a: tuple[Stmt | None, ...] | None, b: tuple[Stmt | None, ...]) -> bool:
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _temps_consumers_first(program: Program, stmts: list[Stmt | None]) -> list[str]:
    last: dict[str, int] = {}
    for i, s in enumerate(stmts):
        if s is not None and program.tensor(s.target.tensor).role is Role.TEMP:
            last[s.target.tensor] = i
    return sorted(last, key=last.__getitem__, reverse=True)


def _restrict_tensor(
    program: Program, stmts: list[Stmt | None], index: DefUse, tensor: str
) -> bool:
    writers = [i for i in index.writers.get(tensor, ()) if stmts[i] is not None]
    readers = [
        (stmts[i], ld)
        for i in index.readers.get(tensor, ())
        if stmts[i] is not None
        for ld in index.loads[i]
        if ld.tensor == tensor
    ]
    if not readers:
        for i in writers:
            stmts[i] = None
        return bool(writers)
    if any(isinstance(t, Indirect) for _, ld in readers for t in ld.index):
        return False
    kept = _demanded(program, tuple(stmts[i] for i in writers), tuple(readers))
    if not kept:
        return False
    changed = False
    removed: list[tuple[int, Stmt]] = []
    for i in writers:
        s = stmts[i]
        pulled = pull(kept, s.target.index)
        new = with_guards(program, s, pulled) if pulled is not None else s
        if new is s:
            continue
        if is_empty(program, new):
            removed.append((i, s))
            stmts[i] = None
            changed = True
        elif points(program, new) < points(program, s):
            stmts[i] = new
            changed = True
    _keep_well_formed(stmts, index, tensor, removed)
    return changed


# (symbols, writer ids, (reader, load) ids) -> (the statements, the demanded region): a later sweep or
# round asks again about the very statements. Bounded; cleared when full. (A memo by value, keyed by
# the statements' deep hash, was hit 0 times in DenseNet-201, Llama-3-8B and timm Swin-T, and hashing
# a hundred readers of a DenseNet scale cost a quarter of the pass.)
_SEEN: dict[tuple, tuple[tuple, tuple[Constraint, ...]]] = {}
SEEN_LIMIT = 1 << 14


def _demanded(
    program: Program, writers: tuple[Stmt, ...], readers: tuple[tuple[Stmt, Load], ...]
) -> tuple[Constraint, ...]:
    """The constraints every reader stays inside that would remove some point of some writer.
    It depends on the statements and the program's symbols only, so it is kept by them."""
    fast = (program.symbols, tuple(map(id, writers)), tuple((id(s), id(ld)) for s, ld in readers))
    hit = _SEEN.get(fast)
    if hit is not None:
        return hit[1]
    cuts = _useful_candidates(program, list(writers), list(readers))
    hull = _Hull(program, readers) if cuts else None
    kept = tuple(c for c in cuts if hull.inside(c))
    if len(_SEEN) >= SEEN_LIMIT:
        _SEEN.clear()
    _SEEN[fast] = ((writers, readers), kept)  # held: no identity in a key is reused while it exists
    return kept


def _keep_well_formed(
    stmts: list[Stmt | None], index: DefUse, tensor: str, removed: list[tuple[int, Stmt]]
) -> None:
    """Restore the earliest removed writer when a reader would now precede every writer. A
    program without in-order loops never needs this (a reader of demanded elements follows their
    writers); an in-order loop does, where a loop-carried read comes before its write in the body
    (and the verifier checks order per tensor, not per element). The restored statement computes
    elements nobody reads."""
    if not removed:
        return
    first_write = next((i for i in index.writers[tensor] if stmts[i] is not None), None)
    first_read = next((i for i in index.readers[tensor] if stmts[i] is not None), None)
    if first_read is not None and (first_write is None or first_read < first_write):
        i, s = removed[0]
        stmts[i] = s


def _candidates(program: Program, stmt: Stmt, load: Load, shape: tuple[int, ...]) -> list[Constraint]:
    """Constraints in the tensor's index space that the reader's accesses might all satisfy: the
    range of each index term, and the reader's guards on variables that index one dimension alone
    (as `v + c`). A range bound the tensor's `shape` implies (lo <= 0, hi >= n - 1) is left out:
    every element written satisfies it, so it could remove nothing."""
    ranges = box_ranges(program, stmt)
    uses: defaultdict[str, int] = defaultdict(int)
    for term in load.index:
        for v in term.variables:
            uses[v] += 1
    out: list[Constraint] = []
    mapping: dict[str, Affine] = {}
    for k, term in enumerate(load.index):
        x = axis(k)
        lo, hi = value_range(term, ranges)
        # x - lo >= 0 and hi - x >= 0, built in canonical form (one term)
        if lo > 0:
            out.append(Constraint(Affine(((x, 1),), -lo)))
        if hi < shape[k] - 1:
            out.append(Constraint(Affine(((x, -1),), hi)))
        if len(term.terms) == 1 and isinstance(term.terms[0][0], str) and term.terms[0][1] == 1:
            v = term.terms[0][0]
            if uses[v] == 1:
                mapping[v] = Affine(((x, 1),), -term.const)
    out += [
        g.substitute(mapping) for g in stmt.guards if g.variables and g.variables <= set(mapping)
    ]
    return out


def _useful_candidates(
    program: Program, writers: list[Stmt], readers: list[tuple[Stmt, Load]]
) -> list[Constraint]:
    """Candidates that would remove some point of some writer."""
    found: dict[Constraint, None] = {}
    shape = program.shape(readers[0][1].tensor)
    for s, ld in readers:
        for c in _candidates(program, s, ld, shape):
            found.setdefault(c)
    spans = [_Spans(program, w, w.target.index) for w in writers]
    useful = []
    for c in found:
        for w, span in zip(writers, spans):
            if not span.holds(c):
                useful.append(c)
                break
    return useful


class _Spans:
    """`holds_on_box(program, stmt, c)` for c pulled through `index`, with each index term's
    interval over the box computed once: a candidate `a·_xk + c0 >= 0` (one axis, the common
    case) pulls to `a·t + c0` with t the term of dimension k, whose interval over the box is
    a·[lo, hi] + c0 exactly (interval arithmetic scales and shifts exactly), so it is decided
    without building the pulled constraint. Other candidates are pulled and checked; a pull
    through an indirect dimension holds nowhere (as `pull` returning None)."""

    def __init__(self, program: Program, stmt: Stmt, index: tuple) -> None:
        self.program, self.stmt, self.index = program, stmt, index
        self.ranges = box_ranges(program, stmt)
        self.terms: dict[int, tuple[int, int] | None] = {}
        self.clipped: tuple | None = None  # (the guard-clipped box, EMPTY or None: not a box), once

    def span(self, k: int) -> tuple[int, int] | None:
        if k not in self.terms:
            t = self.index[k]
            self.terms[k] = None if isinstance(t, Indirect) else value_range(t, self.ranges)
        return self.terms[k]

    def holds(self, c: Constraint) -> bool:
        one = _one_axis(c, len(self.index))
        if one is None:
            pulled = pull((c,), self.index)
            return pulled is not None and holds_on_box(self.program, self.stmt, pulled[0])
        k, a, c0 = one
        span = self.span(k)
        return span is not None and a * (span[0] if a > 0 else span[1]) + c0 >= 0

    def holds_on_clipped_box(self, c: Constraint) -> bool | None:
        """`_inside`'s corner test for a one-axis candidate whose pulled form is linear in the
        loop variables, on a statement whose guards make its domain a box: decided on that box
        (True when it is empty); None when that test does not apply."""
        one = _one_axis(c, len(self.index))
        if one is None:
            return None
        k, a, c0 = one
        interval = self.clipped_interval(k)
        if interval is None:
            return None
        if interval is EMPTY:
            return True
        lo, hi = interval
        return a * (lo if a > 0 else hi) + c0 >= 0

    def clipped_interval(self, k: int) -> tuple[int, int] | object | None:
        """The exact least and greatest value of index term k over the statement's domain when
        that term is linear in the loop variables and the guards make the domain a box (the
        guard-clipped box, whose corners attain both); EMPTY for an empty domain; None when the
        domain or the term is of another form."""
        t = self.index[k]
        if isinstance(t, Indirect) or not t.is_linear or not t.variables <= set(self.stmt.loop_vars):
            return None
        if self.clipped is None:
            if is_box(self.stmt.guards, set(self.stmt.loop_vars)):
                box = clip_ranges(self.ranges, self.stmt.guards)
                self.clipped = (EMPTY if box is None else box,)
            else:
                self.clipped = (None,)
        box = self.clipped[0]
        if box is None or box is EMPTY:
            return box
        return value_range(t, box)


EMPTY = object()  # a statement domain with no points


class _Hull:
    """Whether every reader's accesses satisfy a candidate, for all candidates of one tensor.
    A one-axis candidate a·_xk + c0 >= 0 holds on every access of a reader whose term k has an
    exact interval over its domain (`_Spans.clipped_interval`: `_inside` decides such a reader by
    that interval, an empty domain holding anything) exactly when it holds at the least (a > 0)
    or greatest (a < 0) value over all such readers: so those readers are folded once per axis
    into one interval, and only the others are asked one by one. DenseNet: a per-channel scale
    read by the fifty pieces of a normalisation over a concatenation, each a channel range,
    costs fifty checks per candidate otherwise."""

    def __init__(self, program: Program, readers: tuple[tuple[Stmt, Load], ...]) -> None:
        self.program = program
        self.readers = readers
        self.spans = [_Spans(program, s, ld.index) for s, ld in readers]
        self.axes: dict[int, tuple[float, float, list[int]]] = {}

    def _axis(self, k: int) -> tuple[float, float, list[int]]:
        if k not in self.axes:
            lo, hi, others = math.inf, -math.inf, []
            for r, sp in enumerate(self.spans):
                interval = sp.clipped_interval(k)
                if interval is None:
                    others.append(r)
                elif interval is not EMPTY:
                    lo, hi = min(lo, interval[0]), max(hi, interval[1])
            self.axes[k] = (lo, hi, others)
        return self.axes[k]

    def inside(self, c: Constraint) -> bool:
        one = _one_axis(c, len(self.readers[0][1].index))  # readers of one tensor: its rank
        if one is None:
            return all(self._one(r, c) for r in range(len(self.readers)))
        k, a, c0 = one
        lo, hi, others = self._axis(k)
        folded = lo > hi or a * (lo if a > 0 else hi) + c0 >= 0
        return folded and all(self._one(r, c) for r in others)

    def _one(self, r: int, c: Constraint) -> bool:
        s, ld = self.readers[r]
        return _inside(self.program, s, ld, c, self.spans[r])


def _one_axis(c: Constraint, rank: int) -> tuple[int, int, int] | None:
    """(k, a, c0) when `c` is the inequality a·_xk + c0 >= 0 for a dimension k < rank."""
    if c.equality or len(c.expr.terms) != 1:
        return None
    atom, a = c.expr.terms[0]
    k = _AXES.get(atom) if isinstance(atom, str) else None
    return None if k is None or k >= rank else (k, a, c.expr.const)


_AXES = {axis(k): k for k in range(64)}


def _inside(program: Program, stmt: Stmt, load: Load, c: Constraint, spans: _Spans) -> bool:
    """Every access of `load` over the statement's domain satisfies `c` (exact, by counting);
    `spans`: the load's index terms over the statement's box."""
    if spans.holds(c):  # holds on the whole box
        return True
    decided = spans.holds_on_clipped_box(c)
    if decided is not None:
        return decided
    pulled = pull((c,), load.index)
    if pulled is None:
        return False
    loop_vars = set(stmt.loop_vars)
    if pulled[0].expr.is_linear and pulled[0].variables <= loop_vars and is_box(stmt.guards, loop_vars):
        # The domain is exactly the guard-clipped box, on which a linear form's least and
        # greatest values are attained at corners: the interval decides (no count needed).
        box = clip_ranges(box_ranges(program, stmt), stmt.guards)
        if box is None:
            return True
        lo, hi = value_range(pulled[0].expr, box)
        return lo == hi == 0 if pulled[0].equality else lo >= 0
    return points(program, replace(stmt, guards=stmt.guards + pulled)) == points(program, stmt)
