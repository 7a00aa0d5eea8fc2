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

from dataclasses import dataclass

from solar.ir import polyhedral
from solar.ir.nodes import Cast, Load, Program, Role, Stmt
from solar.ir.scalar_ops import Update

READ_ROLES = (Role.INPUT, Role.PARAM)


def footprint_bytes(
    program: Program, tensor: str, kind: str, stmts: tuple[Stmt, ...] | None
) -> float:
    elements = int(polyhedral.tensor_footprint(program, tensor, kind, stmts))  # type: ignore[arg-type]
    return program.tensor(tensor).dtype.storage_bytes(elements)


def inplace_copies(program: Program) -> frozenset[int]:
    """Statements (flattened indices) that copy an input or param element for element into the
    output that updates it in place (`TensorDecl.updates`): on the one storage they share, such a
    copy moves and computes nothing (an eager in-place op writes only what changes)."""
    updates = {t.name: t.updates for t in program.tensors if t.updates}
    if not updates:
        return frozenset()
    out = set()
    for i, stmt in enumerate(program.stmts):
        source = updates.get(stmt.target.tensor)
        if source is None or stmt.update is not Update.ASSIGN:
            continue
        value = stmt.value
        if isinstance(value, Cast) and value.dtype is program.tensor(source).dtype:
            value = value.arg
        if isinstance(value, Load) and value.tensor == source and value.index == stmt.target.index:
            out.add(i)
    return frozenset(out)


def priced_stmts(program: Program) -> tuple[Stmt, ...] | None:
    """The statements that move bytes: all but the in-place identity copies (None: all of them)."""
    copies = inplace_copies(program)
    if not copies:
        return None
    return tuple(s for i, s in enumerate(program.stmts) if i not in copies)


def inplace_bytes(program: Program, output: str, kept: tuple[Stmt, ...] | None) -> tuple[float, float]:
    """(read, write) compulsory bytes of the storage an output shares with the input it updates.

    Writes: every element a statement other than the identity copy writes (W) must reach DRAM;
    the others keep their initial values where they are. Reads: elements whose initial value is
    used must come from DRAM: every element of the input read by another statement (it holds only
    initial values), and every element of the output read whose value came from the copy, at
    least |output elements read| − |W| of them; the larger of the two is a lower bound on their
    union. For `x.mul_(2)` this is |x| each way; for a KV-cache row write followed by attention
    over the cache, |cache| − |rows| read and |rows| written."""
    source = program.tensor(output).updates
    assert source is not None
    written = footprint_bytes(program, output, "write", kept)
    read_source = footprint_bytes(program, source, "read", kept)
    read_output = footprint_bytes(program, output, "read", None)
    return max(read_source, read_output - written), written


def compulsory_bytes(
    program: Program, tensors: frozenset[str] | None = None
) -> tuple[float, float]:
    """(read, write) compulsory bytes: the read footprint of every input/parameter and the write
    footprint of every output (restricted to `tensors` when given); an output that updates an
    input in place and that input are priced together (`inplace_bytes`)."""
    reads = writes = 0.0
    kept = priced_stmts(program)
    updated = {t.updates for t in program.tensors if t.updates}
    for t in program.tensors:
        if tensors is not None and t.name not in tensors:
            continue
        if t.role in READ_ROLES and t.name not in updated:
            reads += footprint_bytes(program, t.name, "read", None)
        elif t.role is Role.OUTPUT and t.updates:
            r, w = inplace_bytes(program, t.name, kept)
            reads, writes = reads + r, writes + w
        elif t.role is Role.OUTPUT:
            writes += footprint_bytes(program, t.name, "write", None)
    return reads, writes


def written_back(write_bytes: float, l2_bytes: float) -> float:
    """Output bytes that must reach DRAM before the last kernel ends: what does not fit in the
    write-back L2 (docs/BOUNDS.md §3)."""
    return max(0.0, write_bytes - l2_bytes)


def fused_dram_bytes(program: Program, l2_resident: float = 0.0, l2_bytes: float = 0.0) -> float:
    """Compulsory traffic of any implementation.

    Cold cache (`l2_resident` = 0): every input/parameter element the program reads is in DRAM
    only, so it crosses the bus at least once: read footprint × width. Warm cache: at most
    `l2_resident` (the L2 capacity) bytes of them can already be on chip, so at least
    reads − l2_resident cross. Every output element is written at least once: write footprint ×
    width, of which all but `l2_bytes` (the L2 capacity, write-back) must reach DRAM before the
    run ends. Temporaries may live on chip and cost nothing, and a second read of anything is not
    counted — so no correct implementation moves fewer bytes."""
    reads, writes = compulsory_bytes(program)
    return max(0.0, reads - l2_resident) + written_back(writes, l2_bytes)


# ---- unfused: one eager kernel per op instance ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Group:
    """The statements of one op instance (one eager kernel); `key` is the origin's instance id, or
    ("stmt", index) for a statement without an origin."""

    key: int | tuple[str, int]
    node_ids: tuple[int, ...]

    def stmts(self, program: Program) -> tuple[Stmt, ...]:
        return tuple(program.stmts[i] for i in self.node_ids)


def op_groups(program: Program) -> tuple[Group, ...]:
    """Statements grouped by `origin.instance`, in order of each group's first statement."""
    members: dict[int | tuple[str, int], list[int]] = {}
    for i, stmt in enumerate(program.stmts):
        key = ("stmt", i) if stmt.origin is None else stmt.origin.instance
        members.setdefault(key, []).append(i)
    return tuple(Group(k, tuple(ids)) for k, ids in members.items())


def _accessed(stmts: tuple[Stmt, ...]) -> tuple[set[str], set[str]]:
    reads: set[str] = set()
    writes: set[str] = set()
    for s in stmts:
        writes.add(s.target.tensor)
        reads |= {ld.tensor for ld in s.loads()}
    return reads, writes


def unfused_dram_bytes(
    program: Program,
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
    readers: dict[str, list[int]] = {}
    writers: dict[str, list[int]] = {}
    copies = inplace_copies(program)
    priced = [tuple(program.stmts[i] for i in g.node_ids if i not in copies) for g in groups]
    per_group = [(stmts, *_accessed(stmts)) for stmts in priced]
    for gi, (_, reads, writes) in enumerate(per_group):
        for t in reads:
            readers.setdefault(t, []).append(gi)
        for t in writes:
            writers.setdefault(t, []).append(gi)

    def beyond_l2(x: float) -> float:
        return max(0.0, x - l2_bytes)

    out: list[float] = []
    for gi, (stmts, reads, writes) in enumerate(per_group):
        total = 0.0
        for name in sorted(reads):
            role = program.tensor(name).role
            fp = footprint_bytes(program, name, "read", stmts)
            if role in READ_ROLES:
                first = readers[name][0] == gi and not warm
                total += fp if first else beyond_l2(fp)
            elif any(w < gi for w in writers.get(name, ())):
                total += beyond_l2(fp)  # produced by an earlier kernel
        outliving = 0.0
        for name in sorted(writes):
            role = program.tensor(name).role
            later = role is Role.TEMP and any(r > gi for r in readers.get(name, ()))
            if role is Role.OUTPUT or later:
                fp = footprint_bytes(program, name, "write", stmts)
                if writeback:
                    outliving += fp
                else:
                    total += fp if role is Role.OUTPUT else beyond_l2(fp)
        out.append(total + beyond_l2(outliving))
    return tuple(out)
