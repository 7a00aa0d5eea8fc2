"""The recurrence bound (docs/BOUNDS.md §18): the critical path of in-order loops (`Seq`).

A top-level in-order loop of T steps whose body carries a value from step t-1 to step t (a store at
step-index s+c read back at s+c-1: h[s+1] = cell(h[s])) is a chain: step t's *chain statements*
(those that depend, within the step, on the carried value and that the next carried value depends
on) cannot start before step t-1's have finished. One step on P SMs takes at least

    f = min(P * t_step, t_step + t_sync)

t_step the chain statements' compute time per step on the whole GPU (their LP time / T): either the
step runs on one SM (P times slower than the whole GPU at best), or on several SMs, which must then
synchronise across the grid once per step (at least t_sync). Chains that feed one another (an RNN's
layers) form a wavefront: a chain's first step needs at least one step of each chain before it, so
a path c_1 -> ... -> c_L costs at least f_1 + ... + f_{L-1} + T_L f_L ((T + L - 1) f for equal
layers). The bound is max(cache_aware, the longest such path)."""

from __future__ import annotations

from dataclasses import dataclass

from solar.backends.assumptions import Assumptions
from solar.backends.bounds import Bound
from solar.backends.levels import Level
from solar.backends.compute import compute_time
from solar.backends.work import Work, total
from solar.hardware import HardwareSpec
from solar.ir.affine import Affine
from solar.ir.nodes import Stmt
from solar.lift.einsum import EinsumGraph, InOrderLoop

GRID_SYNC_MARGIN = 0.5  # the floor is half the fastest grid-wide barrier measured (as t_min, §4)


@dataclass(frozen=True, slots=True)
class Chain:
    """One top-level in-order loop that carries a value from step to step."""

    position: int  # index of the loop in Program.body
    steps: int
    stmt_ids: tuple[int, ...]  # flattened statements on the chain
    body_ids: tuple[int, ...]  # every flattened statement of the loop
    carried: tuple[str, ...]
    instance: int | None


def _step_term(index: tuple, var: str) -> tuple[int, tuple[int, int]] | None | bool:
    """(dim, (coefficient of `var`, constant)) of the one index dim that uses `var` as ±var + c; None
    if no dim uses it; False if the use is not of that form (or in several dims)."""
    found = None
    for dim, term in enumerate(index):
        if not isinstance(term, Affine):
            return False
        if var not in term.variables:
            continue
        a = term.coefficient(var)
        if found is not None or a not in (1, -1) or term.variables != frozenset({var}) or not term.is_linear:
            return False
        found = (dim, (a, int(term.const)))
    return found


def _other_dims_meet(store: tuple, load: tuple, skip: int | None) -> bool:
    """Can the two accesses touch a common element in the dims other than the step dim? Equal
    expressions or plain loop variables meet; two different constants do not."""
    for dim, (w, r) in enumerate(zip(store, load)):
        if dim == skip:
            continue
        if not isinstance(w, Affine) or not isinstance(r, Affine):
            return False
        if w == r or w.is_plain_var or r.is_plain_var:
            continue
        return False  # different constants, or expressions solar does not compare
    return True


def _same_step(store: tuple, load: tuple, var: str) -> bool:
    """The load reads, at step s, an element the store wrote at the same step s."""
    w, r = _step_term(store, var), _step_term(load, var)
    if w is False or r is False:
        return False
    if w is None or r is None:  # a tensor without a step dim (scratch reused every step)
        return w is None and r is None and _other_dims_meet(store, load, None)
    return w == r and _other_dims_meet(store, load, w[0])


def _carried(store: tuple, load: tuple, var: str) -> bool:
    """The load reads, at step s, the element the store wrote at step s - 1."""
    w, r = _step_term(store, var), _step_term(load, var)
    if not w or not r or w[0] != r[0] or w[1][0] != r[1][0]:
        return False
    a, cw = w[1]
    cr = r[1][1]
    return (cw - cr) * a == 1 and _other_dims_meet(store, load, w[0])


def _chain(loop: InOrderLoop, stmts: tuple[Stmt, ...]) -> Chain | None:
    steps, s, position, first = loop.steps, loop.var, loop.position, loop.node_ids[0]
    if not isinstance(steps, int) or steps < 2:
        return None
    n = len(stmts)
    stores = [st.target for st in stmts]
    carried: set[str] = set()
    seeds_f: set[int] = set()
    seeds_b: set[int] = set()
    for j, st in enumerate(stmts):
        for ld in st.loads():
            writers = [k for k, w in enumerate(stores) if w.tensor == ld.tensor]
            for k in writers:
                if _carried(stores[k].index, ld.index, s):
                    carried.add(ld.tensor)
                    seeds_f.add(j)
                    seeds_b.add(k)
            # an in-place carry (no step dim): read before any write of this step, written later
            if _step_term(ld.index, s) is None and writers:
                flat = [k for k in writers if _step_term(stores[k].index, s) is None]
                if flat and not any(k < j for k in flat) and all(
                    _other_dims_meet(stores[k].index, ld.index, None) for k in flat
                ):
                    carried.add(ld.tensor)
                    seeds_f.add(j)
                    seeds_b.update(flat)
    if not carried:
        return None
    forward = set(seeds_f)
    for j in range(n):  # reads, in the same step, what a forward statement wrote before it
        if j in forward:
            continue
        if any(
            k in forward and stores[k].tensor == ld.tensor and _same_step(stores[k].index, ld.index, s)
            for ld in stmts[j].loads() for k in range(j)
        ):
            forward.add(j)
    backward = set(seeds_b)
    for k in reversed(range(n)):  # writes what a later backward statement reads in the same step
        if k in backward:
            continue
        if any(
            j in backward and stores[k].tensor == ld.tensor and _same_step(stores[k].index, ld.index, s)
            for j in range(k + 1, n) for ld in stmts[j].loads()
        ):
            backward.add(k)
    on_chain = sorted(forward & backward)
    if not on_chain:
        return None
    origins = {stmts[j].origin.instance for j in on_chain if stmts[j].origin is not None}
    return Chain(
        position, steps, tuple(first + j for j in on_chain), tuple(range(first, first + n)),
        tuple(sorted(carried)), origins.pop() if len(origins) == 1 else None,
    )


def find_chains(graph: EinsumGraph) -> tuple[Chain, ...]:
    """Every top-level in-order loop of `graph` that carries a value from step to step."""
    stmts = (tuple(graph.node(i).stmt for i in loop.node_ids) for loop in graph.loops)
    chains = (_chain(loop, body) for loop, body in zip(graph.loops, stmts))
    return tuple(c for c in chains if c is not None)


@dataclass(frozen=True, slots=True)
class Recurrence:
    bound: Bound
    chains: tuple[Chain, ...]
    step_seconds: tuple[float, ...]  # f of each chain
    path_steps: int  # dependent steps on the longest path
    instance_floors: dict  # op instance -> its chains' critical path (for the eager device floors)
    sync_seconds: float
    source: str

    def describe(self) -> str:
        layers = f"{len(self.chains)} in-order loop(s)"
        return (
            f"recurrence: {layers}, {self.path_steps} dependent steps on the longest path, each at "
            f"least min(one SM, whole GPU + grid sync {self.sync_seconds * 1e6:.2f} us: {self.source})"
        )


def _depends(graph: EinsumGraph, chains: tuple[Chain, ...]) -> dict[int, set[int]]:
    """chain -> the chains whose results flow into its chain statements (through any statements)."""
    by_stmt = {i: c for c, chain in enumerate(chains) for i in chain.body_ids}
    flows: dict[str, set[int]] = {}  # tensor -> chains its value depends on
    needs: dict[int, set[int]] = {c: set() for c in range(len(chains))}
    chain_stmts = {i: c for c, chain in enumerate(chains) for i in chain.stmt_ids}
    for node in graph.nodes():
        i, st = node.id, node.stmt
        got: set[int] = set()
        for ld in st.loads():
            got |= flows.get(ld.tensor, set())
        own = by_stmt.get(i)
        if i in chain_stmts:
            needs[chain_stmts[i]] |= got - {chain_stmts[i]}
        if own is not None:
            got = got | {own}
        flows.setdefault(st.target.tensor, set()).update(got)
    return needs


def critical_path(
    steps: list[int], t_steps: list[float], needs: list[set[int]], sms: float, sync_seconds: float
) -> tuple[list[float], list[float], float, int]:
    """Per chain (in program order; `needs[c]`: the earlier chains feeding chain c): its step floor
    f_c = min(sms * t_c, t_c + sync), and its longest path (one step of each chain on the way, then
    all of its own); with the longest path overall and its number of dependent steps."""
    f = [min(sms * t, t + sync_seconds) for t in t_steps]
    prefix: list[float] = []  # one step of this chain after one step of each chain on the way
    prefix_steps: list[int] = []
    path: list[float] = []
    best, best_steps = 0.0, 0
    for c in range(len(steps)):
        before = max(needs[c], key=lambda p: prefix[p], default=None)
        head, head_steps = (prefix[before], prefix_steps[before]) if before is not None else (0.0, 0)
        prefix.append(head + f[c])
        prefix_steps.append(head_steps + 1)
        path.append(head + steps[c] * f[c])
        if path[-1] > best:
            best, best_steps = path[-1], head_steps + steps[c]
    return f, path, best, best_steps


def recurrence_bound(
    graph: EinsumGraph,
    works: dict[int, Work],
    spec: HardwareSpec,
    assumptions: Assumptions,
    floor: Bound,
    sync_seconds: float,
    source: str,
) -> Recurrence | None:
    """The recurrence bound, max(`floor`, longest dependent-step path); None without a chain."""
    chains = find_chains(graph)
    if not chains:
        return None
    t_steps = []
    for chain in chains:
        ct = compute_time(total(works[i] for i in chain.stmt_ids), spec, assumptions)
        t_steps.append(float(ct.seconds) / chain.steps)
    needs = _depends(graph, chains)
    f, path, best, best_steps = critical_path(
        [c.steps for c in chains], t_steps, [needs[c] for c in range(len(chains))],
        spec.sm_count.value, sync_seconds,
    )
    floors: dict[int, float] = {}
    for c, chain in enumerate(chains):
        if chain.instance is not None:
            floors[chain.instance] = max(floors.get(chain.instance, 0.0), path[c])
    seconds = max(floor.seconds, best)
    bound = Bound(
        level=Level.RECURRENCE,
        seconds=seconds,
        bottleneck="steps" if best > floor.seconds else floor.bottleneck,  # type: ignore[arg-type]
        compute_seconds=floor.compute_seconds,
        memory_seconds=floor.memory_seconds,
        launch_seconds=floor.launch_seconds,
        binding_unit=floor.binding_unit,
    )
    return Recurrence(bound, chains, tuple(f), best_steps, floors, sync_seconds, source)
