"""Symbolic bounds: FLOPs, DRAM bytes and the compute, memory, fused, cache-aware and unfused bounds
of a SymbolicProgram as sympy formulas in the user's size symbols, from the same structure the
numeric backends read with isl's parametric counts in place of integers. Every formula is the
numeric backends' own function computed over sympy (`SYMPY`, solar.symbolic.algebra):

- work per class: Σ over einsum nodes of (work per domain point) × |D|(symbols); the work per point
  is the numeric node work at the traced size divided by its domain size (an integer: it is the op
  count of the statement's value, which does not depend on sizes);
- bytes: footprints(symbols) × dtype width, summed and charged by solar.backends.memory
  (`compulsory_bytes`, `unfused_charges`, `charged_bytes`); the cache-aware extras by
  solar.backends.cache / reread / capacity (solar.symbolic.traffic);
- compute: the LP of solar.backends.compute is convex, piecewise linear and homogeneous in the work
  amounts n. Any unit weighting y (Σ y = 1) gives T >= Σ_i n_i min_u y_u / r_iu for EVERY n (weak
  duality), and the weighting the LP finds at one size is tight there. The formula is
  `dual_bound`: the Max of the functionals of the optimal weightings at every traced size and of
  each class alone, a lower bound at every size, equal to the numeric one at the traced sizes;
- fused = Max(compute, bytes / BW, launch), cache_aware likewise with the cache-aware bytes;
  unfused = Σ_kernels Max(compute_g, bytes_g / BW, launch) + the uncharged remainder
  (solar.backends.bounds: `slowest`, `unfused_seconds`, ...)."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import sympy

from solar.backends.assumptions import Assumptions, CacheState
from solar.backends.bounds import kernel_launch, slowest, t_launch, unfused_seconds
from solar.backends.cache import cache_aware_total
from solar.backends.compute import dual_bound, rate_table, solve_lp, unit_weights
from solar.backends.memory import (
    charged_bytes,
    compulsory_by_tensor,
    compulsory_bytes,
    inplace_copies,
    op_groups,
    unfused_charges,
)
from solar.backends.work import graph_work
from solar.errors import SolarError
from solar.hardware import HardwareSpec, get_spec
from solar.ir import polyhedral
from solar.ir.dtypes import BLOCK_SCALES, DType
from solar.ir.nodes import Program
from solar.lift.einsum import EinsumGraph, lift
from solar.symbolic.algebra import SYMPY
from solar.symbolic.counts import Counter
from solar.symbolic.trace import SymbolicError, SymbolicProgram, trace_file
from solar.symbolic.traffic import cache_aware_bytes


@dataclass(frozen=True)
class SymbolicAnalysis:
    """Formulas in the user's symbols (sympy). `work`: amount per work class (MACs or SIMT flops);
    `regions`: for each bound, where each term binds (from `binding_regions`)."""

    program: str
    spec: str
    symbols: Mapping[str, tuple[str, int]]  # symbol -> (module global, traced value)
    defs: Mapping[str, sympy.Expr]
    flops: sympy.Expr
    contraction_flops: sympy.Expr
    dram_bytes: sympy.Expr
    cache_aware_dram_bytes: sympy.Expr
    unfused_dram_bytes: sympy.Expr
    compute_seconds: sympy.Expr
    memory_seconds: sympy.Expr
    launch_seconds: sympy.Expr
    fused_seconds: sympy.Expr
    cache_aware_seconds: sympy.Expr
    unfused_seconds: sympy.Expr
    points: tuple[Mapping[str, int], ...]

    def evaluate(self, values: Mapping[str, int]) -> dict[str, float]:
        """Every formula at one size point (symbol -> integer)."""
        subs = {sympy.Symbol(s, integer=True, positive=True): int(v) for s, v in values.items()}
        missing = set(self.symbols) - set(values)
        if missing:
            raise SolarError(f"evaluate needs a value for {', '.join(sorted(missing))}")
        out = {}
        for name in FORMULAS:
            v = getattr(self, name).subs(subs)
            out[name] = int(v) if name in EXACT and v.is_Integer else float(v)
        return out

    def formulas(self) -> dict[str, str]:
        return {name: str(getattr(self, name)) for name in FORMULAS}

    def regions(self) -> dict[str, list[str]]:
        """For the fused bound: the crossover of each pair of its terms, solved for each symbol."""
        terms = {
            "compute": self.compute_seconds,
            "memory": self.memory_seconds,
            "launch": self.launch_seconds,
        }
        syms = [sympy.Symbol(s, integer=True, positive=True) for s in self.symbols]
        return binding_regions(terms, syms, {s: v for s, (_, v) in self.symbols.items()})


FORMULAS = (
    "flops",
    "contraction_flops",
    "dram_bytes",
    "cache_aware_dram_bytes",
    "unfused_dram_bytes",
    "compute_seconds",
    "memory_seconds",
    "launch_seconds",
    "fused_seconds",
    "cache_aware_seconds",
    "unfused_seconds",
)
EXACT = {"flops", "contraction_flops", "dram_bytes"}  # integers (or halves: 4-bit types)


def binding_regions(
    terms: Mapping[str, sympy.Expr], syms: list[sympy.Symbol], base: Mapping[str, int]
) -> list[str]:
    """The bound as a piecewise formula along each symbol (the others at their traced values):
    the intervals of the symbol in which each term of the Max binds, e.g.
    `N in [1, 119.8): memory = 3.58e-12*N**2`. Crossovers are the real roots > 1 of the
    differences of the terms (a term that is itself a Max is split into its parts)."""
    flat: list[tuple[str, sympy.Expr]] = []
    for name, expr in terms.items():
        for p in expr.args if isinstance(expr, sympy.Max) else (expr,):
            flat.append((name, p))
    x = sympy.Symbol("x", real=True)
    lines = []
    for sym in syms:
        fixed = {s: base[s.name] for s in syms if s != sym}
        curves = [(n, sympy.expand(e.subs(fixed).subs(sym, x))) for n, e in flat]
        edges = sorted(_crossings(curves, x) | {1.0}) + [float("inf")]
        spans: list[list] = []
        for lo, hi in zip(edges, edges[1:]):
            mid = lo * 2 if hi == float("inf") else (lo + hi) / 2
            name, expr = max(curves, key=lambda c: float(c[1].subs(x, mid)))
            if spans and spans[-1][3] == expr:
                spans[-1][1] = hi
            else:
                spans.append([lo, hi, name, expr])
        others = "".join(f", {s} = {v}" for s, v in fixed.items())
        for lo, hi, name, expr in spans:
            lines.append(f"{sym} in [{lo:.6g}, {hi:.6g}){others}: {name} = {expr.subs(x, sym)}")
    return lines


def _branches(e: sympy.Expr) -> list[sympy.Expr]:
    """The polynomial pieces of `e`: each Max(a, b) inside it replaced by a or by b (every
    combination, at most 2^4), so that roots of differences can be taken piece by piece."""
    out = [e]
    for m in list(e.atoms(sympy.Max))[:4]:
        out = [b.subs(m, arg) for b in out for arg in m.args]
    return [sympy.expand(b) for b in out]


def _crossings(curves: list[tuple[str, sympy.Expr]], x: sympy.Symbol) -> set[float]:
    """Candidate edges: the real roots > 1 of the differences of every pair of curves' polynomial
    pieces, and of each Max's arguments (where a piece switches). A superfluous edge only splits a
    span; which term binds on each span is decided by evaluating it."""
    pieces = [p for _, e in curves for p in _branches(e)]
    diffs = [a - b for i, a in enumerate(pieces) for b in pieces[i + 1 :]]
    for _, e in curves:
        diffs += [m.args[0] - m.args[1] for m in e.atoms(sympy.Max) if len(m.args) == 2]
    cuts: set[float] = set()
    for d in diffs:
        d = sympy.expand(d)
        if not d.free_symbols or not d.is_polynomial(x):
            continue
        for r in sympy.Poly(d, x).nroots():
            if abs(sympy.im(r)) < 1e-9 * max(1.0, abs(sympy.re(r))) and sympy.re(r) > 1:
                cuts.add(float(sympy.re(r)))
    return cuts


# ---- work ----------------------------------------------------------------------------------------


def _per_point(program: Program, graph, counter: Counter) -> dict[int, tuple[dict, sympy.Expr]]:
    """node id -> ({work class: amount per point}, |D| formula)."""
    works = graph_work(graph)
    out = {}
    for node in graph.nodes():
        w = works[node.id]
        points = int(polyhedral.domain_size(program, node.stmt))
        if w.is_zero or points == 0:
            continue
        per = {}
        for k, n in w.macs + w.simt:
            if n % points:
                raise SymbolicError(
                    f"work of {node.stmt.target.tensor} is not a multiple of its domain"
                )
            per[k] = n // points
        out[node.id] = (per, counter.domain(node.stmt))
    return out


def _classes(per_point, ids) -> dict:
    amounts: dict = defaultdict(lambda: sympy.Integer(0))
    for i in ids:
        if i in per_point:
            per, d = per_point[i]
            for k, n in per.items():
                amounts[k] += n * d
    return {k: sympy.expand(v) for k, v in amounts.items()}


# ---- compute -------------------------------------------------------------------------------------


# The LP itself has no symbolic twin (scipy's HiGHS solves it at numbers, as
# solar.backends.compute._solve does): it is solved at each traced size for its optimal unit
# weights, and the bound those weights give (solar.backends.compute.dual_bound) is the formula.
@functools.lru_cache(maxsize=65536)
def _weights(
    table: tuple[tuple[float, tuple[tuple[str, float], ...]], ...],
) -> tuple[float, ...] | None:
    """Optimal unit weights y of the compute LP for amounts and rates `table` (None: one class)."""
    if len(table) == 1:
        return None
    y = unit_weights(solve_lp(table)[1])
    return None if y is None else tuple(y)


def _compute(amounts: dict, spec: HardwareSpec, a: Assumptions, points, syms) -> sympy.Expr:
    if not amounts:
        return sympy.Float(0.0)
    table = rate_table(amounts.items(), spec, a)
    weightings = []
    for p in points:
        subs = {syms[s]: v for s, v in p.items()}
        y = _weights(tuple((float(n.subs(subs)), rates) for n, rates in table))
        if y is not None:
            weightings.append(y)
    return dual_bound(table, weightings, SYMPY)


# ---- bytes ---------------------------------------------------------------------------------------


def _bytes(program: Program, tensor: str, elements: sympy.Expr) -> sympy.Expr:
    dtype = program.tensor(tensor).dtype
    if dtype in BLOCK_SCALES:
        raise SymbolicError(f"{tensor}: block-scaled {dtype.text} bytes are not symbolic yet")
    return elements * sympy.Rational(dtype.bits, 8)


def _footprints(program: Program, c: Counter):
    """`footprint(graph, tensor, kind, ids)` of solar.backends.memory with formulas: the bytes of
    the footprint of the statements `ids` (None: all of them), counted by `c`."""

    def footprint(graph: EinsumGraph, name: str, kind: str, ids) -> sympy.Expr:
        stmts = None if ids is None else [graph.node(i).stmt for i in sorted(ids)]
        return _bytes(program, name, c.footprint(name, kind, stmts))

    return footprint


def _unfused_bytes(
    graph: EinsumGraph, groups, footprint, l2: float, warm: bool, writeback: bool
) -> list[sympy.Expr]:
    """solar.backends.memory.unfused_dram_bytes with formulas: its charges and rules."""
    return [
        charged_bytes(charges, sympy.Float(l2), warm, writeback, SYMPY)
        for charges in unfused_charges(graph, groups, footprint)
    ]


# ---- the analysis --------------------------------------------------------------------------------


def analyze_file(
    path: str | Path,
    symbols: Mapping[str, str] | str,
    load_program: Callable[[Path], Program],
    arch: str | Sequence[str] = "H100-SXM",
    assumptions: Assumptions = Assumptions(),
) -> list[SymbolicAnalysis]:
    """Formulas of the file's bounds on each GPU of `arch` under `assumptions` (`load_program`:
    see solar.symbolic.trace.trace_file)."""
    specs = [get_spec(a) for a in ([arch] if isinstance(arch, str) else arch)]
    sp = trace_file(path, symbols, load_program)
    return [analyze_symbolic(sp, spec, assumptions) for spec in specs]


def analyze_symbolic(
    sp: SymbolicProgram, spec: HardwareSpec, a: Assumptions = Assumptions()
) -> SymbolicAnalysis:
    program = sp.program
    graph = lift(program)
    counter = Counter(sp)
    syms = {s: sympy.Symbol(s, integer=True, positive=True) for s in sp.symbols}
    per_point = _per_point(program, graph, counter)
    all_ids = [n.id for n in graph.nodes()]
    amounts = _classes(per_point, all_ids)
    mac_total = sum((v for k, v in amounts.items() if _is_mac(k)), sympy.Integer(0))
    flops = sympy.expand(
        2 * mac_total + sum((v for k, v in amounts.items() if not _is_mac(k)), sympy.Integer(0))
    )
    bw = sympy.Float(spec.dram_bytes_per_s)
    launch = sympy.Float(t_launch(spec, a, bool(program.stmts)))
    if any(t.updates for t in program.tensors):
        raise SymbolicError(
            "in-place updates (an output that updates an input) are not symbolic yet"
        )
    footprint = _footprints(program, counter)
    per_tensor = compulsory_by_tensor(graph, footprint, SYMPY)
    reads, writes = compulsory_bytes(graph, None, per_tensor, SYMPY)
    dram, dependency, capacity = cache_aware_bytes(
        sp, spec, reads, writes, lambda ts: compulsory_bytes(graph, ts, per_tensor, SYMPY)[0], a
    )
    cab = cache_aware_total(dram, dependency, capacity, SYMPY)
    compute = _compute(amounts, spec, a, sp.points, syms)
    memory = dram / bw
    fused = slowest(compute, memory, launch, SYMPY)
    cache_aware = slowest(compute, cab / bw, launch, SYMPY)

    groups = op_groups(graph)
    copies = inplace_copies(graph)
    group_bytes = _unfused_bytes(
        graph, groups, footprint, spec.l2_bytes, a.cache == CacheState.WARM, a.writeback
    )
    op_seconds, op_memory = [], []
    for g, nbytes in zip(groups, group_bytes):
        ga = _classes(per_point, g.node_ids)
        op_launch = kernel_launch(launch, not copies.issuperset(g.node_ids), SYMPY)
        op_memory.append(nbytes / bw)
        op_seconds.append(
            slowest(_compute(ga, spec, a, sp.points, syms), op_memory[-1], op_launch, SYMPY)
        )
    unfused, unfused_bytes, _ = unfused_seconds(op_seconds, op_memory, group_bytes, cab, bw, SYMPY)
    return SymbolicAnalysis(
        program.name,
        spec.name,
        sp.symbols,
        sp.defs,
        flops,
        sympy.expand(2 * mac_total),
        dram,
        cab,
        unfused_bytes,
        compute,
        memory,
        launch,
        fused,
        cache_aware,
        unfused,
        sp.points,
    )


def _is_mac(key) -> bool:
    return isinstance(key[0], DType)
