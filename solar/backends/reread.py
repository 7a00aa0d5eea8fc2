"""Dependency-forced re-reads: outputs that need an input element AND a reduction over a slice of
that input that contains it (x / ||x||, batch-norm statistics, softmax or layer norm over rows).

Condition, found from the def-use structure of the program (never from op names):
  - X is an input or parameter that no statement writes (it starts in DRAM);
  - a *consumer* statement C reads X at element e and a derived tensor q at element f, where q's
    value at f depends on a set G_f of X's elements that contains e (G_f is found by composing the
    element relations of the statements between X and q: a reduction folds many elements of X into
    one of q);
  - C's value at each point reaches a program output through statements that neither reduce nor
    overwrite it (so each output element individually needs both x_e and q_f).
Then for every slice G_f: when q_f is complete every element of G_f has been read; each element e
of E_f = {e read by C together with f} is still needed afterwards, and at that moment at most S
bytes (all on-chip storage) are on chip, so at least |E_f|·w − S bytes must come from DRAM again
(w: the narrowest width a value derived from one element of X is held or stored in, `_hold_bits`):

    extra traffic >= Σ_f max(0, |E_f|·w − S)

(the slices E_f of one pattern are disjoint). Proof, model and worked examples: docs/BOUNDS.md §8.
Only plain accesses (solar.backends.access) are analysed: exact, and anything else is skipped, which
only lowers the bound."""

from __future__ import annotations

from dataclasses import dataclass, replace

from solar.backends.access import (
    Plain,
    extent_product,
    folds_every_point,
    is_box,
    plain_load,
    plain_store,
)
from solar.backends.algebra import FLOATS, Algebra, Num
from solar.ir.nodes import Cast, Role, walk
from solar.lift.einsum import EinsumGraph, EinsumNode

# How the elements of q relate to X: for each dimension of q, the dimension of X that it equals
# (None: not tied to X, i.e. q's element along it does not select X's). Every element pair that
# satisfies these equalities is a true dependence (the accesses are plain, domains are boxes).
Link = tuple[int | None, ...]
MAX_LINKS = 16  # distinct relations kept per (tensor, reader); more only adds candidate patterns


@dataclass(frozen=True, slots=True)
class Reread:
    """One dependency-forced re-read pattern: `groups` disjoint slices of `group_elements` elements
    of `tensor`, each needed again after the statistic `stat` (read by statement `consumer`) that
    depends on the whole slice is complete. Elements are priced at `hold_bits` each."""

    tensor: str
    stat: str
    consumer: int
    groups: int
    group_elements: int
    hold_bits: int
    onchip_bytes: float

    @property
    def group_bytes(self) -> float:
        return self.group_elements * self.hold_bits / 8

    @property
    def bytes(self) -> float:
        return reread_bytes(self.groups, self.group_elements, self.hold_bits, self.onchip_bytes)


def _solve(memo: dict, key, compute, pending):
    """memo[key], computed by the generator compute(key): it yields the key of each entry it needs
    and is sent that entry's value, and returns its own. The entries it needs are computed first,
    from an explicit stack (a chain of thousands of statements would pass Python's recursion
    limit); one needed while it is being computed reads `pending` (never, when the needs strictly
    move one way through the program)."""
    if key in memo:
        return memo[key]
    stack = [(key, compute(key))]
    active = {key}
    value = None
    while stack:
        top, steps = stack[-1]
        try:
            need = steps.send(value)
        except StopIteration as done:
            memo[top] = value = done.value
            active.discard(top)
            stack.pop()
            continue
        if need in memo:
            value = memo[need]
        elif need in active:
            value = pending
        else:
            stack.append((need, compute(need)))
            active.add(need)
            value = None
    return memo[key]


class _Analysis:
    def __init__(self, graph: EinsumGraph) -> None:
        self.graph = graph
        self.du = graph.defuse
        self._links: dict[tuple[str, int], tuple[tuple[str, Link], ...]] = {}
        self._reaches: dict[int, int | None] = {}

    def links(self, tensor: str, position: int) -> tuple[tuple[str, Link], ...]:
        """(X, link) for every DRAM tensor X that the value of `tensor` read at `position`
        depends on through plain statements (a subset of the true dependences)."""
        return _solve(self._links, (tensor, position), self._links_steps, ())

    def _links_steps(self, key: tuple[str, int]):
        tensor, position = key
        w = self.du.last_writer_before(tensor, position)
        if w is None:
            return ()
        node = self.graph.node(w)
        store = plain_store(self.graph, node)
        if store is None or not folds_every_point(node):
            return ()
        found: dict[tuple[str, Link], None] = {}
        for load in node.operands:
            src = plain_load(self.graph, node, load)
            if src is None:
                continue
            step: Link = tuple(None if v is None else src.dim_of(v) for v in store.dims)
            if load.tensor in self.du.dram:
                found[(load.tensor, step)] = None
            else:
                for x, link in (yield (load.tensor, w)):
                    found[(x, tuple(None if d is None else link[d] for d in step))] = None
        if node.reduce.op is not None:  # += etc. also fold in the element's previous value
            for item in (yield (tensor, w)):
                found[item] = None
        return tuple(list(found)[:MAX_LINKS])

    def reach_bits(self, i: int) -> int | None:
        """None unless each point of statement i writes its own element and that value flows
        element by element, without reduction or overwrite, into the final value of a program
        output; then the narrowest width (bits) of the tensors it is stored in on the way."""
        return _solve(self._reaches, i, self._reach_steps, None)

    def _reach_steps(self, i: int):
        node = self.graph.node(i)
        if node.reduced_vars or plain_store(self.graph, node) is None:
            return None
        t = node.output
        bits = node.out_dtype.bits
        found: list[int] = []
        if self.graph.tensor(t).role is Role.OUTPUT and self.du.next_writer_after(t, i) is None:
            found.append(bits)
        for r in self.du.readers_of_value(t, i):
            reader = self.graph.node(r)
            if any(
                ld.tensor == t and plain_load(self.graph, reader, ld) is not None
                for ld in reader.operands
            ):
                onward = yield r
                if onward is not None:
                    found.append(min(bits, onward))
        return min(found) if found else None


def _hold_bits(graph: EinsumGraph, consumer_value, x: str, path_bits: int) -> int:
    """Bits per element at which a value derived from one element of X can be held or spilled:
    the narrowest of X's width, any cast in the consumer and every tensor the consumer's value is
    stored in on its way to the output (a partial output written early and read back is such a
    value). Narrower than all of these, an element's value is not the program's value."""
    bits = [graph.tensor(x).dtype.bits, path_bits]
    bits += [e.dtype.bits for e in walk(consumer_value) if isinstance(e, Cast)]
    return min(bits)


def _pattern(
    graph: EinsumGraph, node: EinsumNode, xa: Plain, qa: Plain, link: Link, path_bits: int
) -> Reread | None:
    """The re-read pattern of consumer `node` reading X through `xa` and q through `qa`, when
    every point's X element lies in the slice its q element depends on (checked symbolically)."""
    for qdim, xdim in enumerate(link):
        if xdim is not None and qa.dims[qdim] != xa.dims[xdim]:
            return None
    return Reread(
        tensor=xa.tensor,
        stat=qa.tensor,
        consumer=node.id,
        groups=extent_product(node, xa.vars & qa.vars),
        group_elements=extent_product(node, xa.vars - qa.vars),
        hold_bits=_hold_bits(graph, node.stmt.value, xa.tensor, path_bits),
        onchip_bytes=0.0,
    )


def find_rereads(graph: EinsumGraph, onchip_bytes: float) -> tuple[Reread, ...]:
    """Every dependency-forced re-read pattern of the program (including those whose slices fit
    on chip and so force nothing), in statement order. The patterns are found once per graph; only
    their pricing depends on the on-chip storage."""
    if "rereads" not in graph.memo:
        graph.memo["rereads"] = _find_rereads(graph)
    return tuple(replace(r, onchip_bytes=onchip_bytes) for r in graph.memo["rereads"])


def _find_rereads(graph: EinsumGraph) -> tuple[Reread, ...]:
    a = _Analysis(graph)
    out: dict[Reread, None] = {}
    for node in graph.nodes():
        path_bits = a.reach_bits(node.id) if is_box(node) else None
        if path_bits is None:
            continue
        loads = [(ld, plain_load(graph, node, ld)) for ld in node.operands]
        xs = [(ld, p) for ld, p in loads if p is not None and ld.tensor in a.du.dram]
        qs = [(ld, p) for ld, p in loads if p is not None and ld.tensor not in a.du.dram]
        for _, xa in xs:
            for qload, qa in qs:
                for x, link in a.links(qload.tensor, node.id):
                    if x == xa.tensor:
                        found = _pattern(graph, node, xa, qa, link, path_bits)
                        if found is not None:
                            out[found] = None
    return tuple(out)


def dependency_forced_bytes(rereads: tuple[Reread, ...]) -> float:
    """Extra DRAM bytes every implementation moves (`largest_pattern` of the patterns' bytes)."""
    return largest_pattern([r.bytes for r in rereads])


# ---- the formulas: over floats here, over sympy formulas in solar.symbolic.traffic ---------------


def reread_bytes(
    groups: Num, group_elements: Num, hold_bits: int, onchip_bytes: Num, alg: Algebra = FLOATS
) -> Num:
    """Σ over the `groups` slices of max(0, slice bytes − S), a slice being `group_elements`
    elements of `hold_bits` bits."""
    return groups * alg.max(alg.zero, group_elements * hold_bits / 8 - onchip_bytes)


def largest_pattern(pattern_bytes: list, alg: Algebra = FLOATS) -> Num:
    """The largest single pattern's bytes (0 without one). Patterns are not added: two of them may
    be served by the same re-reads (layer norm's mean and variance both need x again; one pass
    after both statistics serves both)."""
    return alg.max_of([alg.zero, *pattern_bytes])
