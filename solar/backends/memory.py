"""DRAM bytes that must cross the memory bus: for the whole program run as one fused kernel, and per
eager kernel (op instance) for the unfused bound. Bytes are footprints (distinct elements, counted
exactly by isl) times each tensor's own dtype width, plus the block scales of block-scaled formats
(solar.ir.dtypes.BLOCK_SCALES); 4-bit types make them fractional, hence floats.

Cold cache: L2 holds nothing of the program's tensors when it starts. Warm cache: it may hold up to
its capacity of input/parameter bytes, which are then free (`l2_resident` below).

Write-back: the L2 is a write-back cache and a timed run ends when its last kernel does, so up to the
L2 capacity of output bytes may still be dirty in L2 then, never having reached DRAM: only
max(0, |Y| - L) of the output bytes |Y| are compulsory DRAM writes (`written_back`), and at the end
of each eager kernel at most L bytes of what it wrote can still be in L2."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solar.backends.algebra import FLOATS, Algebra, Num
from solar.ir.nodes import Cast, Load, Role
from solar.ir.scalar_ops import Update
from solar.lift.einsum import EinsumGraph

READ_ROLES = (Role.INPUT, Role.PARAM)


def footprint_bytes(
    graph: EinsumGraph, tensor: str, kind: str, stmts: frozenset[int] | None = None
) -> float:
    """Bytes of the distinct elements of `tensor` read or written by the statements at positions
    `stmts` (None: all of them)."""
    return graph.footprints.storage_bytes(tensor, kind, stmts)  # type: ignore[arg-type]


def inplace_copies(graph: EinsumGraph) -> frozenset[int]:
    """Statements (flattened indices) that copy an input or param element for element into the
    output that updates it in place (`TensorDecl.updates`): on the one storage they share, such a
    copy moves and computes nothing (an eager in-place op writes only what changes)."""
    if "inplace_copies" not in graph.memo:
        graph.memo["inplace_copies"] = _inplace_copies(graph)
    return graph.memo["inplace_copies"]


def _inplace_copies(graph: EinsumGraph) -> frozenset[int]:
    updates = {t.name: t.updates for t in graph.tensors if t.updates}
    if not updates:
        return frozenset()
    out = set()
    for node in graph.nodes():
        source = updates.get(node.output)
        if source is None or node.reduce is not Update.ASSIGN:
            continue
        value = node.stmt.value
        if isinstance(value, Cast) and value.dtype is graph.tensor(source).dtype:
            value = value.arg
        if isinstance(value, Load) and value.tensor == source and value.index == node.output_index:
            out.add(node.id)
    return frozenset(out)


def priced_stmts(graph: EinsumGraph) -> frozenset[int] | None:
    """Positions of the statements that move bytes: all but the in-place identity copies (None: all
    of them)."""
    copies = inplace_copies(graph)
    if not copies:
        return None
    return frozenset(i for i in range(len(graph)) if i not in copies)


def inplace_bytes(
    graph: EinsumGraph, output: str, kept: frozenset[int] | None
) -> tuple[float, float]:
    """(read, write) compulsory bytes of the storage an output shares with the input it updates.

    Writes: every element a statement other than the identity copy writes (W) must reach DRAM;
    the others keep their initial values where they are. Reads: elements whose initial value is
    used must come from DRAM: every element of the input read by another statement (it holds only
    initial values), and every element of the output read whose value came from the copy, at
    least |output elements read| − |W| of them; the larger of the two is a lower bound on their
    union. For `x.mul_(2)` this is |x| each way; for a KV-cache row write followed by attention
    over the cache, |cache| − |rows| read and |rows| written."""
    source = graph.tensor(output).updates
    assert source is not None
    written = footprint_bytes(graph, output, "write", kept)
    # |W| is subtracted: an upper bound on it (the exact count wherever footprints are exact)
    most = graph.footprints.at_most(output, "write", kept)
    written_most = graph.tensor(output).dtype.storage_bytes(most)
    read_source = footprint_bytes(graph, source, "read", kept)
    read_output = footprint_bytes(graph, output, "read", None)
    return max(read_source, read_output - written_most), written


def compulsory_by_tensor(
    graph: EinsumGraph, footprint: Callable | None = None, alg: Algebra = FLOATS
) -> dict[str, tuple[Num, Num]]:
    """(read, write) compulsory bytes of each input/parameter and output, in declaration order; an
    output that updates an input in place carries the bytes of both (`inplace_bytes`), and that
    input none of its own. `footprint(graph, tensor, kind, ids)`: as in `unfused_charges` (the
    symbolic analysis passes formulas, and refuses in-place updates before)."""
    if footprint is None and "compulsory" in graph.memo:
        return graph.memo["compulsory"]
    footprint_of = footprint_bytes if footprint is None else footprint
    kept = priced_stmts(graph)
    updated = {t.updates for t in graph.tensors if t.updates}
    out: dict[str, tuple[Num, Num]] = {}
    for t in graph.tensors:
        if t.role in READ_ROLES and t.name not in updated:
            out[t.name] = (footprint_of(graph, t.name, "read", None), alg.zero)
        elif t.role is Role.OUTPUT and t.updates:
            out[t.name] = inplace_bytes(graph, t.name, kept)
        elif t.role is Role.OUTPUT:
            out[t.name] = (alg.zero, footprint_of(graph, t.name, "write", None))
    if footprint is None:
        graph.memo["compulsory"] = out
    return out


def compulsory_bytes(
    graph: EinsumGraph,
    tensors: frozenset[str] | None = None,
    per: dict[str, tuple[Num, Num]] | None = None,
    alg: Algebra = FLOATS,
) -> tuple[Num, Num]:
    """(read, write) compulsory bytes: the read footprint of every input/parameter and the write
    footprint of every output (restricted to `tensors` when given); an output that updates an
    input in place and that input are priced together (`inplace_bytes`). `per`: the table of
    `compulsory_by_tensor` (default the graph's own, in bytes)."""
    if per is None:
        per = compulsory_by_tensor(graph)
    if tensors is None:
        names: list[str] = list(per)
    else:  # in declaration order, as the whole sum
        order = graph.memo.setdefault("compulsory_order", {n: k for k, n in enumerate(per)})
        names = sorted((n for n in tensors if n in per), key=order.__getitem__)
    reads = writes = alg.zero
    for name in names:
        r, w = per[name]
        reads, writes = reads + r, writes + w
    return reads, writes


def written_back(write_bytes: Num, l2_bytes: Num, alg: Algebra = FLOATS) -> Num:
    """Output bytes that must reach DRAM before the last kernel ends: what does not fit in the
    write-back L2 (docs/BOUNDS.md §3)."""
    return alg.max(alg.zero, write_bytes - l2_bytes)


def fused_dram_bytes(graph: EinsumGraph, l2_resident: float = 0.0, l2_bytes: float = 0.0) -> float:
    """Compulsory traffic of any implementation.

    Cold cache (`l2_resident` = 0): every input/parameter element the program reads is in DRAM
    only, so it crosses the bus at least once: read footprint × width. Warm cache: at most
    `l2_resident` (the L2 capacity) bytes of them can already be on chip, so at least
    reads − l2_resident cross. Every output element is written at least once: write footprint ×
    width, of which all but `l2_bytes` (the L2 capacity, write-back) must reach DRAM before the
    run ends. Temporaries may live on chip and cost nothing, and a second read of anything is not
    counted — so no correct implementation moves fewer bytes."""
    reads, writes = compulsory_bytes(graph)
    return max(0.0, reads - l2_resident) + written_back(writes, l2_bytes)


# ---- unfused: one eager kernel per op instance ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Group:
    """The statements of one op instance (one eager kernel); `key` is the origin's instance id, or
    ("stmt", index) for a statement without an origin."""

    key: int | tuple[str, int]
    node_ids: tuple[int, ...]


def op_groups(graph: EinsumGraph) -> tuple[Group, ...]:
    """Statements grouped by `origin.instance`, in order of each group's first statement."""
    if "op_groups" not in graph.memo:
        members: dict[int | tuple[str, int], list[int]] = {}
        for node in graph.nodes():
            key = ("stmt", node.id) if node.origin is None else node.origin.instance
            members.setdefault(key, []).append(node.id)
        graph.memo["op_groups"] = tuple(Group(k, tuple(ids)) for k, ids in members.items())
    return graph.memo["op_groups"]


# How one footprint of one kernel is charged (see `unfused_dram_bytes`): in full, or beyond L2;
# "dram_first" is an input/parameter read, in full only in the first kernel that reads it and cold;
# "output" (an output written) and "outlives" (a temporary a later kernel reads) are the writes that
# must outlive the kernel: jointly beyond L2 with write-back, else in full and beyond L2 each.
Charge = tuple[str, float]  # ("full" | "beyond_l2" | "dram_first" | "output" | "outlives", bytes)


def unfused_charges(
    graph: EinsumGraph, groups: tuple[Group, ...], footprint: Callable | None = None
) -> tuple[tuple[Charge, ...], ...]:
    """The footprints each eager kernel is charged for, with how (arch-independent: the L2 size
    and the cache state enter only in `charged_bytes`). `footprint(graph, tensor, kind, ids)`:
    bytes of a footprint (default `footprint_bytes`; the symbolic analysis passes formulas)."""
    memo = ("unfused_charges", groups)
    if footprint is None and memo in graph.memo:
        return graph.memo[memo]
    footprint_of = footprint_bytes if footprint is None else footprint
    readers: dict[str, list[int]] = {}
    writers: dict[str, list[int]] = {}
    copies = inplace_copies(graph)
    priced = [frozenset(i for i in g.node_ids if i not in copies) for g in groups]
    per_group = [(ids, *_accessed(graph, ids)) for ids in priced]
    for gi, (_, reads, writes) in enumerate(per_group):
        for t in reads:
            readers.setdefault(t, []).append(gi)
        for t in writes:
            writers.setdefault(t, []).append(gi)
    out: list[tuple[Charge, ...]] = []
    for gi, (ids, reads, writes) in enumerate(per_group):
        charges: list[Charge] = []
        for name in sorted(reads):
            role = graph.tensor(name).role
            if role in READ_ROLES:
                fp = footprint_of(graph, name, "read", ids)
                charges.append(("dram_first" if readers[name][0] == gi else "beyond_l2", fp))
            elif writers.get(name, [gi])[0] < gi:  # produced by an earlier kernel
                charges.append(("beyond_l2", footprint_of(graph, name, "read", ids)))
        for name in sorted(writes):
            role = graph.tensor(name).role
            if role is Role.OUTPUT:
                charges.append(("output", footprint_of(graph, name, "write", ids)))
            elif role is Role.TEMP and readers.get(name, [gi])[-1] > gi:
                charges.append(("outlives", footprint_of(graph, name, "write", ids)))
        out.append(tuple(charges))
    if footprint is None:
        graph.memo[memo] = tuple(out)
    return tuple(out)


def _accessed(graph: EinsumGraph, ids: frozenset[int]) -> tuple[set[str], set[str]]:
    reads: set[str] = set()
    writes: set[str] = set()
    for i in sorted(ids):
        node = graph.node(i)
        writes.add(node.output)
        reads |= {o.tensor for o in node.operands}
    return reads, writes


def unfused_dram_bytes(
    graph: EinsumGraph,
    groups: tuple[Group, ...],
    l2_bytes: float,
    warm: bool = False,
    writeback: bool = True,
) -> tuple[float, ...]:
    """Bytes each eager kernel must move across DRAM (one entry per group). With L = L2 capacity:

    - input/parameter read: the full read footprint in the FIRST group that reads the tensor (cold
      cache: none of it is on chip yet; warm cache: max(0, footprint − L), as in later groups);
      max(0, footprint − L) in later groups, since at a kernel boundary at most L bytes of anything
      can sit in L2 (shared memory and registers do not survive a kernel);
    - temporary written by one group and read by a later one: the writer pays max(0, written − L)
      (what cannot stay in L2 when the kernel ends must have gone to DRAM) and each later group that
      reads it pays max(0, read − L). A temporary used only inside its own group costs nothing (the
      kernel may keep it on chip);
    - output: written by the group; a later group reading an output that an earlier group wrote
      pays max(0, read − L), like a temporary;
    - writes, jointly (`writeback`): of the bytes a group writes that must outlive it (outputs, and
      temporaries a later group reads), at most L can still be in the write-back L2 when the kernel
      ends, so the group pays max(0, Σ of them − L) (≥ the sum of the per-temporary
      max(0, written − L)). Without `writeback` outputs are paid in full, temporaries as above.

    Groups are ordered by their first statement; "earlier"/"later" refer to that order.

    Each rule counts only bytes that must cross DRAM during that kernel, so each entry is a lower
    bound on that kernel's traffic."""
    return tuple(
        charged_bytes(charges, l2_bytes, warm, writeback)
        for charges in unfused_charges(graph, groups)
    )


def charged_bytes(
    charges: tuple[Charge, ...], l2_bytes: Num, warm: bool, writeback: bool, alg: Algebra = FLOATS
) -> Num:
    """One kernel's DRAM bytes from its charges (the rules of `unfused_dram_bytes`)."""
    total = outliving = 0
    for how, fp in charges:
        if how == "full" or (how == "dram_first" and not warm):
            total += fp
        elif how in ("output", "outlives") and writeback:
            outliving += fp
        elif how == "output":
            total += fp
        else:
            total += alg.max(alg.zero, fp - l2_bytes)
    return total + alg.max(alg.zero, outliving - l2_bytes)
