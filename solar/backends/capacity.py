"""Capacity-forced traffic of contractions whose operands come from DRAM: the I/O lower bound of
Smith, Lowery, Langou and van de Geijn, "A Tight I/O Lower Bound for Matrix Multiplication"
(arXiv:1702.02017, 2019): computing C := A·B + C (A m×k, B k×n, distinct matrices, every one of the
m·n·k multiply-adds performed) with a fast memory of S words moves at least 2mnk/√S − 2S words
between slow and fast memory.

Applied only where its conditions hold, seen from the statement's structure: one contraction
statement `C[..] += A[..] * B[..]` without guards whose three accesses are plain (bijective, see
solar.backends.access), A and B distinct inputs/parameters, C a third tensor, and every loop variable
in at least two of the three accesses. The variables then split into batch (all three), M (A and C),
N (B and C) and K (A and B, reduced); each batch element is an independent m×n×k product over
disjoint data. Convolutions (affine windows) and guarded contractions are left out.

Units: S is all on-chip storage in words of the narrowest of the three dtypes (more words only
lowers the bound), and each word moved is priced at that width. The theorem's C starts and ends in
slow memory; here C may start as zeros made on chip and end consumed on chip, which saves at most
m·n reads and m·n writes, so per batch element

    Q >= ceil(2mnk / sqrt(S_w)) − 2·S_w − 2·m·n   words

(exact integers; never below zero). See docs/BOUNDS.md §9."""

from __future__ import annotations

from dataclasses import dataclass, replace

from solar.backends.access import extent_product, is_box, plain_load, plain_store
from solar.backends.algebra import FLOATS, Algebra, Num
from solar.lift.einsum import EinsumGraph, EinsumNode, contraction_loads


@dataclass(frozen=True, slots=True)
class ContractionIO:
    """The I/O bound of one contraction statement (`node`), in words of `word_bits` bits."""

    node: int
    a: str
    b: str
    c: str
    batch: int
    m: int
    n: int
    k: int
    word_bits: int
    onchip_words: int

    @property
    def words_per_batch(self) -> int:
        return words_per_batch(self.m, self.n, self.k, self.onchip_words)

    @property
    def bytes(self) -> float:
        """Lower bound on the DRAM bytes moved for A, B and C's partial sums (the final values of C
        excluded): batch × words × word width."""
        return contraction_bytes(
            self.batch, self.m, self.n, self.k, self.word_bits, self.onchip_words
        )


# ---- the formulas: over Python integers here, over sympy formulas in solar.symbolic.traffic ------


def smith_words(m: Num, n: Num, k: Num, s_words: int, alg: Algebra = FLOATS) -> Num:
    """ceil(2mnk / sqrt(S)) − 2S in exact integer arithmetic: the smallest integer q with
    q >= 2mnk/sqrt(S) is the smallest q with q*q*S >= (2mnk)^2."""
    top = 2 * m * n * k
    return alg.ceil_sqrt(alg.ceil_div(top * top, s_words)) - 2 * s_words


def words_per_batch(m: Num, n: Num, k: Num, s_words: int, alg: Algebra = FLOATS) -> Num:
    """max(0, ceil(2mnk / sqrt(S_w)) − 2·S_w − 2·m·n) words of one batch element (the module
    docstring)."""
    return alg.max(0, smith_words(m, n, k, s_words, alg) - 2 * m * n)


def contraction_bytes(
    batch: Num, m: Num, n: Num, k: Num, word_bits: int, s_words: int, alg: Algebra = FLOATS
) -> Num:
    """batch × words per batch element × word width: the DRAM bytes of A, B and C's partial sums."""
    return batch * words_per_batch(m, n, k, s_words, alg) * word_bits / 8


def onchip_words(onchip_bytes: float, word_bits: int) -> int:
    """How many words of `word_bits` bits fit in `onchip_bytes` (rounded down: a partial word holds
    no value)."""
    bits = onchip_bytes * 8
    if bits != int(bits):
        raise ValueError(f"on-chip capacity {onchip_bytes!r} is not a whole number of bytes")
    return int(bits) // word_bits


def contraction_io(graph: EinsumGraph, onchip_bytes: float) -> tuple[ContractionIO, ...]:
    """The Smith et al. bound of every contraction node that meets its conditions (the shapes are
    found once per graph; only the on-chip words depend on the GPU)."""
    if "contractions" not in graph.memo:
        dram = graph.defuse.dram
        found = (_one(graph, n, dram) for n in graph.nodes() if n.is_contraction)
        graph.memo["contractions"] = tuple(io for io in found if io is not None)
    return tuple(
        replace(io, onchip_words=onchip_words(onchip_bytes, io.word_bits))
        for io in graph.memo["contractions"]
    )


def _one(graph: EinsumGraph, node: EinsumNode, dram: frozenset[str]) -> ContractionIO | None:
    pair = contraction_loads(node.stmt)
    if pair is None or not is_box(node):
        return None
    la, lb = pair
    pa, pb = plain_load(graph, node, la), plain_load(graph, node, lb)
    pc = plain_store(graph, node)
    if pa is None or pb is None or pc is None:
        return None
    names = {pa.tensor, pb.tensor, pc.tensor}
    if len(names) != 3 or pa.tensor not in dram or pb.tensor not in dram:
        return None
    va, vb, vc = pa.vars, pb.vars, pc.vars
    if any(((v in va) + (v in vb) + (v in vc)) < 2 for v, _ in node.extents):
        return None
    bits = min(graph.tensor(t).dtype.bits for t in names)
    return ContractionIO(
        node=node.id,
        a=pa.tensor,
        b=pb.tensor,
        c=pc.tensor,
        batch=extent_product(node, va & vb & vc),
        m=extent_product(node, (va & vc) - vb),
        n=extent_product(node, (vb & vc) - va),
        k=extent_product(node, (va & vb) - vc),
        word_bits=bits,
        onchip_words=0,
    )
