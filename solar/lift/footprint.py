"""Footprints and domain sizes of an einsum graph, derived once per graph: which statements read and
write each tensor (one pass over the program), the number of distinct elements a set of them
touches, and each statement's number of points. Backends ask the graph (`graph.footprints`) instead
of scanning the program once per tensor, and every extra GPU reuses the counts.

Counts equal solar.ir.polyhedral's (which is called for everything not below):
  - a *box* access (no guards, every index dimension a constant, an indirect index — one element in
    polyhedral's "min" mode — or c*v + d with one loop variable v and c != 0) touches exactly
    Π extent(v) elements over its distinct variables v: the map from those variables to elements
    is injective, each variable being recovered from a dimension it indexes;
  - a union of accesses one of which touches as many elements as the tensor has covers the whole
    tensor (every access stays inside it: the verifier checks that), so it is the tensor's size;
  - everything else goes to polyhedral.footprint_range (exact, or lower and upper bounds for a
    union of quasi-affine maps), memoised on a key without tensor names (identical layers differ
    only in their tensors' names: one count serves all of them)."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from typing import Literal

from solar.ir import polyhedral
from solar.ir.nodes import IndexTerm, Indirect, Load, Program, Store

Kind = Literal["read", "write"]
Access = Load | Store
# One access, with tensor names left out: the statement's loops (extents resolved), guards, index.
AccessKey = tuple


class Footprints:
    """Readers and writers of every tensor with their accesses, and memoised counts, for the
    statements of `program` (lifted as `nodes`: their operands and extents are read, not rebuilt)."""

    def __init__(self, program: Program, nodes: Iterable) -> None:
        self.program = program
        self._access: dict[Kind, dict[str, list[tuple[int, Access]]]] = {"read": {}, "write": {}}
        self._extents: list[tuple[tuple[str, int], ...]] = []
        self._guarded: list[bool] = []
        for node in nodes:
            write = Store(node.output, node.output_index)
            self._access["write"].setdefault(node.output, []).append((node.id, write))
            for load in dict.fromkeys(Load(o.tensor, o.index) for o in node.operands):
                self._access["read"].setdefault(load.tensor, []).append((node.id, load))
            self._extents.append(node.extents)
            self._guarded.append(bool(node.guards))
        self._points: dict[int, int] = {}
        self._isl: dict[tuple, tuple[int, int]] = {}

    # ---- queries ---------------------------------------------------------------------------------

    def elements(self, tensor: str, kind: Kind, stmts: Iterable[int] | None = None) -> int:
        """Distinct elements of `tensor` read or written by the statements at positions `stmts`
        (default: all); the same number as polyhedral.tensor_footprint over those statements:
        exact, or a lower bound where polyhedral bounds a union instead of counting it."""
        return self.bounds(tensor, kind, stmts)[0]

    def at_most(self, tensor: str, kind: Kind, stmts: Iterable[int] | None = None) -> int:
        """An upper bound on the same number (equal to `elements` where that one is exact)."""
        return self.bounds(tensor, kind, stmts)[1]

    def bounds(
        self, tensor: str, kind: Kind, stmts: Iterable[int] | None = None
    ) -> tuple[int, int]:
        """(lower, upper) bounds on `elements` (polyhedral.footprint_range)."""
        found = self._access[kind].get(tensor, [])
        if stmts is not None:
            keep = stmts if isinstance(stmts, (set, frozenset)) else frozenset(stmts)
            found = [(i, a) for i, a in found if i in keep]
        return self._union(tensor, found)

    def storage_bytes(self, tensor: str, kind: Kind, stmts: Iterable[int] | None = None) -> float:
        """`elements` times the tensor's storage width (block scales included)."""
        return self.program.tensor(tensor).dtype.storage_bytes(self.elements(tensor, kind, stmts))

    def points(self, position: int) -> int:
        """Points of statement `position`'s iteration domain (guards included)."""
        if position not in self._points:
            if self._guarded[position]:
                stmt = self.program.stmts[position]
                self._points[position] = int(polyhedral.domain_size(self.program, stmt))
            else:
                self._points[position] = math.prod(max(0, n) for _, n in self._extents[position])
        return self._points[position]

    # ---- counting --------------------------------------------------------------------------------

    def _union(self, tensor: str, found: list[tuple[int, Access]]) -> tuple[int, int]:
        if not found:
            return 0, 0
        numel = self.program.numel(tensor)
        boxes = [
            None if self._guarded[i] else _box(self._extents[i], a.index) for i, a in found
        ]
        if numel in boxes:
            return numel, numel
        if len(found) == 1 and boxes[0] is not None:
            return boxes[0], boxes[0]
        key = (self.program.shape(tensor), frozenset(self._key(i, a) for i, a in found))
        if key not in self._isl:
            stmts = self.program.stmts
            pairs = [(stmts[i], a) for i, a in found]
            self._isl[key] = polyhedral.footprint_range(self.program, pairs)
        return self._isl[key]

    def _key(self, position: int, access: Access) -> AccessKey:
        guards = self.program.stmts[position].guards if self._guarded[position] else ()
        index = tuple(
            polyhedral.indirect_values(access.index, bool(guards)) if isinstance(t, Indirect) else t
            for t in access.index
        )
        return (self._extents[position], guards, index, self.program.symbols)


@functools.lru_cache(maxsize=1 << 16)
def _box(extents: tuple[tuple[str, int], ...], index: tuple[IndexTerm, ...]) -> int | None:
    """The exact footprint of one access over the box of `extents` (see the module docstring), or
    None when the access is not of that form. Keyed by value: identical layers share it."""
    sizes = dict(extents)
    if any(n <= 0 for n in sizes.values()):
        return 0
    used: set[str] = set()
    values = polyhedral.indirect_values(index, guarded=False)
    for term in index:
        if isinstance(term, Indirect):
            continue  # one element in "min" mode (or its distinct claim: `values`)
        if not term.terms:
            continue
        if len(term.terms) != 1:
            return None
        atom, coeff = term.terms[0]
        if not isinstance(atom, str) or atom not in sizes or coeff == 0:
            return None
        used.add(atom)
    return values * math.prod(sizes[v] for v in used)
