"""The cache-aware traffic (solar.backends.cache) as formulas: the dependency-forced re-reads and
the capacity-forced contraction I/O are products of loop extents (slice counts and sizes; the
batch, m, n, k of a contraction) found by the numeric pattern search. Run on the symbolic program
with every size symbol bound to a distinct large prime, each such product factors uniquely into
those primes (no constant extent shares a factor with them), which gives it as a monomial of the
size symbols; the byte rules of solar.backends.reread / capacity / cache are then written with
sympy (Max, ceiling, sqrt), exact at integer sizes."""

from __future__ import annotations

import dataclasses

import sympy

from solar.backends.capacity import contraction_io, onchip_words
from solar.backends.reread import find_rereads
from solar.hardware import HardwareSpec
from solar.ir.nodes import Program
from solar.lift.einsum import lift
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
    writes: sympy.Expr,
    footprint_reads,
    cache: str,
    writeback: bool = True,
) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """(compulsory, dependency-forced extra, capacity-forced extra) bytes as formulas, by the rules
    of solar.backends.cache.cache_aware_traffic. `footprint_reads(tensors)` gives the compulsory
    read bytes of a set of tensors; with `writeback`, output bytes up to the L2 capacity need not
    reach DRAM (solar.backends.memory.written_back)."""
    m = Monomials(sp)
    graph = lift(m.program)
    onchip = spec.onchip_bytes
    resident = sympy.Float(spec.l2_bytes) if cache == "warm" else sympy.Integer(0)
    if writeback:
        writes = sympy.Max(0, writes - sympy.Float(spec.l2_bytes))
    compulsory = sympy.Max(0, reads - resident) + writes if cache == "warm" else reads + writes
    s_bytes = sympy.Float(onchip)
    dependency = [
        m.expr(r.groups)
        * sympy.Max(0, m.expr(r.group_elements) * sympy.Rational(r.hold_bits, 8) - s_bytes)
        for r in find_rereads(graph, onchip)
    ]
    capacity = []
    for io in contraction_io(graph, onchip):
        sw = onchip_words(onchip, io.word_bits)
        mm, nn, kk, bb = (m.expr(x) for x in (io.m, io.n, io.k, io.batch))
        top = 2 * mm * nn * kk
        smith = sympy.ceiling(sympy.sqrt(sympy.ceiling(top**2 / sw))) - 2 * sw
        words = sympy.Max(0, smith - 2 * mm * nn)
        io_bytes = bb * words * sympy.Rational(io.word_bits, 8)
        ab = footprint_reads(frozenset({io.a, io.b}))
        capacity.append(sympy.Max(io_bytes, ab) + (reads - ab) + writes - resident)
    dep = sympy.Max(0, *dependency) if dependency else sympy.Integer(0)
    cap = sympy.Max(0, sympy.Max(0, *capacity) - compulsory) if capacity else sympy.Integer(0)
    return compulsory, dep, cap
