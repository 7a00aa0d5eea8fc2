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

from dataclasses import dataclass

from solar.backends.capacity import ContractionIO, contraction_io
from solar.backends.memory import compulsory_bytes
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

    @property
    def cache_aware_bytes(self) -> float:
        return self.compulsory_bytes + max(self.dependency_forced_bytes, self.capacity_forced_bytes)

    def describe(self) -> str:
        """The cache-aware bound's model, in one line (printed with the assumptions)."""
        return (
            f"cache-aware: at most S = {self.onchip_bytes:.0f} bytes are on chip at any moment "
            "(L2 + every SM's L1/shared memory, registers and tensor memory); values are held and "
            "moved at their dtype width (incompressible data); outputs depend on every element "
            "the program's accesses name (docs/BOUNDS.md sections 8-10)"
        )


def cache_aware_traffic(graph: EinsumGraph, spec: HardwareSpec, cache: str = "cold") -> Traffic:
    """The traffic levels of `graph` on `spec`. Under a warm cache up to the L2 capacity of input
    bytes may already be on chip: the compulsory and the capacity-forced totals drop by at most
    that much; re-reads forced after a reduction are unaffected (they happen after the first reads,
    when at most S bytes are on chip whatever the cache held at the start)."""
    onchip = spec.onchip_bytes
    resident = spec.l2_bytes if cache == "warm" else 0.0
    reads, writes = compulsory_bytes(graph)
    compulsory = max(0.0, reads - resident) + writes

    rereads = find_rereads(graph, onchip)
    dependency = dependency_forced_bytes(rereads)

    ios = contraction_io(graph, onchip)
    capacity_total = 0.0
    for io in ios:
        # I/O of A, B and C's partial sums (>= their compulsory reads), plus the compulsory bytes of
        # every other tensor: distinct transfers, so they add.
        ab_reads, _ = compulsory_bytes(graph, frozenset({io.a, io.b}))
        total = max(io.bytes, ab_reads) + (reads - ab_reads) + writes - resident
        capacity_total = max(capacity_total, total)
    capacity = max(0.0, capacity_total - compulsory)
    return Traffic(onchip, resident, compulsory, dependency, capacity, rereads, ios)
