"""The cache-aware traffic (solar.backends.cache) as formulas: the dependency-forced re-reads and
the capacity-forced contraction I/O are products of loop extents (slice counts and sizes; the
batch, m, n, k of a contraction) found by the numeric pattern search. Run on the symbolic program
with every size symbol bound to a distinct large prime, each such product factors uniquely into
those primes (no constant extent shares a factor with them), which gives it as a monomial of the
size symbols; the byte rules of solar.backends.reread / capacity / cache are then computed over
sympy (`SYMPY`: Max, ceiling, sqrt), exact at integer sizes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import sympy

from solar.backends.assumptions import Assumptions, CacheState
from solar.backends.cache import capacity_forced, compulsory_traffic
from solar.backends.capacity import contraction_bytes, contraction_io
from solar.backends.reread import find_rereads, largest_pattern, reread_bytes
from solar.hardware import HardwareSpec
from solar.ir.nodes import Program
from solar.lift.einsum import lift
from solar.symbolic.algebra import SYMPY
from solar.symbolic.trace import SymbolicProgram

FIRST_PRIME = 10**9  # above any constant extent of a program solar can analyse


def _primes(count: int) -> list[int]:
    out, p = [], FIRST_PRIME
    while len(out) < count:
        p = sympy.nextprime(p)
        out.append(int(p))
    return out


class Monomials:
    """Integers of the prime-bound program back to formulas in the user's symbols."""

    def __init__(self, sp: SymbolicProgram) -> None:
        names = sorted(sp.defs)
        self.primes = dict(zip(names, _primes(len(names))))
        self.defs = sp.defs
        bound = dict(sp.program.symbols) | self.primes
        self.program: Program = dataclasses.replace(sp.program, symbols=tuple(bound.items()))

    def expr(self, value: int) -> sympy.Expr:
        out = sympy.Integer(1)
        for name, p in self.primes.items():
            while value % p == 0:
                value //= p
                out *= self.defs[name]
        if value >= FIRST_PRIME:
            raise ValueError(f"a pattern size {value} has a factor that is no size symbol")
        return sympy.expand(out * value)


def cache_aware_bytes(
    sp: SymbolicProgram,
    spec: HardwareSpec,
    reads: sympy.Expr,
    all_writes: sympy.Expr,
    footprint_reads: Callable[[frozenset[str]], sympy.Expr],
    a: Assumptions,
) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """(compulsory, dependency-forced extra, capacity-forced extra) bytes as formulas, by the
    functions of solar.backends.cache.cache_aware_traffic; `footprint_reads(tensors)` gives the
    compulsory read bytes of a set of tensors."""
    m = Monomials(sp)
    graph = lift(m.program)
    onchip = spec.onchip_bytes
    resident, writes, compulsory = compulsory_traffic(
        reads, all_writes, sympy.Float(spec.l2_bytes), a.cache == CacheState.WARM, a.writeback,
        SYMPY,
    )
    s_bytes = sympy.Float(onchip)
    dependency = largest_pattern(
        [
            reread_bytes(m.expr(r.groups), m.expr(r.group_elements), r.hold_bits, s_bytes, SYMPY)
            for r in find_rereads(graph, onchip)
        ],
        SYMPY,
    )
    ios = contraction_io(graph, onchip)
    io_bytes = [
        contraction_bytes(
            *(m.expr(x) for x in (io.batch, io.m, io.n, io.k)), io.word_bits, io.onchip_words,
            SYMPY,
        )
        for io in ios
    ]
    ab_reads = [footprint_reads(frozenset({io.a, io.b})) for io in ios]
    capacity = capacity_forced(io_bytes, ab_reads, reads, writes, resident, compulsory, SYMPY)
    return compulsory, dependency, capacity
