"""The cache-aware traffic bound: the compulsory DRAM bytes plus the traffic that finite on-chip
storage S (L2 + every SM's L1/shared memory, registers and tensor memory) forces on ANY
implementation:

  dependency-forced   outputs need an input element and a reduction over its slice
                      (solar.backends.reread);
  capacity-forced     contractions of DRAM operands move at least the Smith et al. I/O bound
                      (solar.backends.capacity).

    cache_aware_bytes = compulsory + max(dependency-forced extra, capacity-forced extra)

Each extra is a lower bound on its own; they are not added because one re-read could serve both
(docs/BOUNDS.md §10)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from solar.backends.algebra import FLOATS, Algebra, Num
from solar.backends.capacity import ContractionIO, contraction_io, onchip_words
from solar.backends.memory import compulsory_bytes, written_back
from solar.backends.reread import Reread, dependency_forced_bytes, find_rereads
from solar.hardware import HardwareSpec
from solar.lift.einsum import EinsumGraph


@dataclass(frozen=True, slots=True)
class Traffic:
    """DRAM traffic per level of the cache-aware bound (bytes).

    `compulsory_bytes`: every needed input byte once (less what a warm L2 may hold) and every
    output byte once; `dependency_forced_bytes` and `capacity_forced_bytes`: the EXTRA bytes each
    mechanism forces beyond the compulsory ones; `rereads`, `contractions`: the patterns found
    (including those that force nothing because they fit on chip)."""

    onchip_bytes: float
    l2_resident_bytes: float
    compulsory_bytes: float
    dependency_forced_bytes: float
    capacity_forced_bytes: float
    rereads: tuple[Reread, ...]
    contractions: tuple[ContractionIO, ...]
    read_bytes: float = 0.0  # compulsory reads (before a warm L2's share)
    write_bytes: float = 0.0  # compulsory writes (beyond the L2 under write-back)

    @property
    def cache_aware_bytes(self) -> float:
        return cache_aware_total(
            self.compulsory_bytes, self.dependency_forced_bytes, self.capacity_forced_bytes
        )

    def describe(self) -> str:
        """The cache-aware bound's model, in one line (printed with the assumptions)."""
        return (
            f"cache-aware: at most S = {self.onchip_bytes:.0f} bytes are on chip at any moment "
            "(L2 + every SM's L1/shared memory, registers and tensor memory); values are held and "
            "moved at their dtype width (incompressible data); outputs depend on every element "
            "the program's accesses name (docs/BOUNDS.md sections 8-10)"
        )


def cache_aware_traffic(
    graph: EinsumGraph, spec: HardwareSpec, cache: str = "cold", writeback: bool = True
) -> Traffic:
    """The traffic levels of `graph` on `spec`. With `writeback`, output bytes count beyond the L2
    capacity only (the rest may still be in L2 when the last kernel ends). Under a warm cache up to the L2 capacity of input
    bytes may already be on chip: the compulsory and the capacity-forced totals drop by at most
    that much; re-reads forced after a reduction are unaffected (they happen after the first reads,
    when at most S bytes are on chip whatever the cache held at the start)."""
    onchip = spec.onchip_bytes
    reads, all_writes = compulsory_bytes(graph)
    resident, writes, compulsory = compulsory_traffic(
        reads, all_writes, spec.l2_bytes, cache == "warm", writeback
    )
    rereads = find_rereads(graph, onchip)
    ios = contraction_io(graph, onchip)
    dependency, capacity = _forced(graph, rereads, ios, reads, writes, resident, compulsory)
    return Traffic(onchip, resident, compulsory, dependency, capacity, rereads, ios, reads, writes)


def traffic_at(graph: EinsumGraph, traffic: Traffic, onchip: float) -> Traffic:
    """`traffic` with on-chip storage `onchip` bytes instead: the same patterns (they do not depend
    on S) priced at S — how `solar provision` inverts the cache-aware bytes in S."""
    rereads = tuple(replace(r, onchip_bytes=float(onchip)) for r in traffic.rereads)
    ios = tuple(replace(io, onchip_words=onchip_words(float(onchip), io.word_bits)) for io in traffic.contractions)
    dependency, capacity = _forced(
        graph, rereads, ios, traffic.read_bytes, traffic.write_bytes, traffic.l2_resident_bytes,
        traffic.compulsory_bytes,
    )
    return replace(
        traffic, onchip_bytes=float(onchip), dependency_forced_bytes=dependency,
        capacity_forced_bytes=capacity, rereads=rereads, contractions=ios,
    )


def _forced(
    graph: EinsumGraph, rereads: tuple[Reread, ...], ios: tuple[ContractionIO, ...], reads: float,
    writes: float, resident: float, compulsory: float,
) -> tuple[float, float]:
    """The dependency- and capacity-forced extra bytes of the patterns found."""
    ab_reads = [compulsory_bytes(graph, frozenset({io.a, io.b}))[0] for io in ios]
    capacity = capacity_forced(
        [io.bytes for io in ios], ab_reads, reads, writes, resident, compulsory
    )
    return dependency_forced_bytes(rereads), capacity


# ---- the formulas: over floats here, over sympy formulas in solar.symbolic.traffic ---------------


def compulsory_traffic(
    reads: Num, all_writes: Num, l2_bytes: Num, warm: bool, writeback: bool, alg: Algebra = FLOATS
) -> tuple[Num, Num, Num]:
    """(input bytes a warm L2 may hold, output bytes that reach DRAM, compulsory bytes) from the
    compulsory `reads` and `all_writes`: under a warm cache up to the L2 capacity of the reads is
    free (a cold L2 holds nothing, and the reads count in full); with `writeback` only the output
    bytes beyond the L2 capacity count (the rest may still be dirty in the write-back L2 when the
    last kernel ends)."""
    resident = l2_bytes if warm else alg.zero
    writes = written_back(all_writes, l2_bytes, alg) if writeback else all_writes
    return resident, writes, (alg.max(alg.zero, reads - resident) if warm else reads) + writes


def capacity_forced(
    io_bytes: Sequence[Num], ab_reads: Sequence[Num], reads: Num, writes: Num, resident: Num,
    compulsory: Num, alg: Algebra = FLOATS,
) -> Num:
    """The capacity-forced extra bytes of contractions whose I/O bounds are `io_bytes` and whose
    operands A and B have the compulsory reads `ab_reads`: for each, the I/O of A, B and C's
    partial sums (>= their compulsory reads) plus the compulsory bytes of every other tensor
    (distinct transfers, so they add); the largest, beyond the compulsory bytes."""
    totals = [
        alg.max(io, ab) + (reads - ab) + writes - resident for io, ab in zip(io_bytes, ab_reads)
    ]
    if not totals:
        return alg.zero
    return alg.max(alg.zero, alg.max_of([alg.zero, *totals]) - compulsory)


def cache_aware_total(
    compulsory: Num, dependency: Num, capacity: Num, alg: Algebra = FLOATS
) -> Num:
    """compulsory + max(dependency-forced extra, capacity-forced extra): each extra is a lower
    bound on its own, and one re-read could serve both."""
    return compulsory + alg.max(dependency, capacity)
