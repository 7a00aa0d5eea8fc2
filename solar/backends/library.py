"""The library level: a lower bound on implementations that run every GEMM-shaped contraction op
(matmul, convolution, attention core) as a kernel of its own — as cuBLAS/cuDNN/FlashAttention calls
in eager PyTorch and torch.compile's extern kernels do — and fuse everything else freely.

The class of implementations (docs/BOUNDS.md §15):
- a *library contraction* is a contraction statement with M, N and K extents all > 1 (each operand
  has a free variable the other lacks); an op instance holding one is a *library kernel*, and two
  library kernels share no kernel, except an attention core: a kernel whose operand is reached
  from another kernel's result through a reduction over exactly as many points as it contracts
  (softmax or a row norm between two products, streamed as FlashAttention does) is merged with it;
- a library kernel may fuse any pointwise statement (no reduced variable) as prologue or epilogue;
  statements that reduce run in other kernels, which may fuse with each other freely;
- kernels run one after another (one stream), and each is timed like an eager kernel.

    T_K      = max(compute_K, bytes_K / BW, t_min)      bytes_K = max(0, in_K − L) + max(0, out_K − L)
    T_rest   = max(compute of the reducing statements outside library kernels, t_min)  (if any)
    library  = max(cache_aware, Σ_K T_K + T_rest + max(0, E/BW − slack))

in_K / out_K: values that must enter / leave K (they are produced / consumed where K cannot be):
an input or a result of a reduction or of another kernel, followed through the chain of pointwise
one-to-one statements that K could fuse (`_root`, `_sink`); E and slack as in the unfused bound."""

from __future__ import annotations

import math
from dataclasses import dataclass

from solar.backends.assumptions import Assumptions
from solar.backends.compute import compute_time
from solar.backends.memory import Group, inplace_copies, op_groups
from solar.backends.work import Work, total
from solar.hardware import HardwareSpec
from solar.ir.affine import Affine
from solar.ir.dtypes import DType
from solar.ir.nodes import Cast, Load, Role, Stmt, walk
from solar.lift.einsum import EinsumGraph, contraction_loads

MERGE_DEPTH = 24  # statements searched back from a kernel's operand for an attention core


@dataclass(frozen=True, slots=True)
class LibraryKernel:
    """One library kernel: the op instances (and, for an attention core, the statements between
    them) it runs, the bytes that must enter and leave it, and its time bound."""

    ops: tuple[str, ...]
    sources: tuple[str, ...]
    module: str
    node_ids: tuple[int, ...]
    in_bytes: float
    out_bytes: float
    dram_bytes: float  # max(0, in − L) + max(0, out − L)
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float
    seconds: float
    binding_unit: str | None


@dataclass(frozen=True, slots=True)
class LibraryLevel:
    """The library bound's parts: the kernels, the reducing statements outside them (`rest`), and
    the traffic no kernel was charged for that the slack could not hide (`extra_seconds`)."""

    kernels: tuple[LibraryKernel, ...]
    rest_node_ids: tuple[int, ...]
    rest_compute_seconds: float
    rest_seconds: float
    rest_launch_seconds: float
    extra_seconds: float
    seconds: float  # before the max with the cache-aware bound


def _plain(index: tuple, loop_vars: frozenset[str]) -> bool:
    """Index terms that are distinct plain loop variables (or 0) naming every loop variable: the
    access is one-to-one with the statement's domain."""
    names = []
    for term in index:
        if not isinstance(term, Affine):
            return False
        if term.is_plain_var:
            names.append(next(iter(term.variables)))
        elif not (term.is_const and term.const == 0):
            return False
    return len(names) == len(set(names)) and set(names) == loop_vars


def _one_to_one(stmt: Stmt, load: Load | None = None) -> bool:
    """A pointwise statement whose store (and `load`) is one-to-one with its domain."""
    lv = frozenset(stmt.loop_vars)
    if stmt.guards or stmt.reduced_vars or not _plain(stmt.target.index, lv):
        return False
    return load is None or _plain(load.index, lv)


def _casts(stmt: Stmt) -> tuple[DType, ...]:
    return tuple(e.dtype for e in walk(stmt.value) if isinstance(e, Cast))


def is_library_contraction(node) -> bool:
    """A GEMM-shaped contraction: M, N and K (free variables of each operand, reduced variables)
    each span more than one point. Matrix-vector products, dot products and depthwise
    convolutions are not: they are reductions any kernel may fuse."""
    if not node.is_contraction:
        return False
    pair = contraction_loads(node.stmt)
    if pair is None:
        return False
    extents = dict(node.extents)
    va, vb = (
        frozenset().union(*(t.variables for t in ld.index if isinstance(t, Affine))) for ld in pair
    )
    out = frozenset().union(*(t.variables for t in node.output_index if isinstance(t, Affine)))
    sizes = [
        math.prod(extents.get(v, 1) for v in vs)
        for vs in ((va - vb) & out, (vb - va) & out, frozenset(node.reduced_vars))
    ]
    return all(s > 1 for s in sizes)


class _Parts:
    """Union-find of op groups into library kernels."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, g: int) -> int:
        while self.parent.setdefault(g, g) != g:
            g = self.parent[g]
        return g

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


@dataclass(frozen=True)
class _Kernel:
    """One library kernel before pricing: its statements, bytes in and out, and where it came
    from."""

    node_ids: tuple[int, ...]
    in_bytes: float
    out_bytes: float
    ops: tuple[str, ...]
    sources: tuple[str, ...]
    module: str


@dataclass(frozen=True)
class _Plan:
    """The kernels of the library level and the statements left to the rest: they depend on the
    graph only, so a further GPU costs the pricing alone."""

    kernels: tuple[_Kernel, ...]
    rest: tuple[int, ...]


def _plan(graph: EinsumGraph) -> _Plan:
    du = graph.defuse
    nodes = {n.id: n for n in graph.nodes()}
    groups: tuple[Group, ...] = op_groups(graph)
    group_of = {i: gi for gi, g in enumerate(groups) for i in g.node_ids}
    lib_nodes = {i for i, n in nodes.items() if is_library_contraction(n)}
    lib_groups = sorted({group_of[i] for i in lib_nodes})
    lib_set = set(lib_groups)
    extents = {i: dict(n.extents) for i, n in nodes.items()}

    def reduced_points(i: int) -> int:
        return math.prod(extents[i].get(v, 1) for v in nodes[i].reduced_vars)

    # attention cores: a library contraction whose operand comes from another library kernel
    # through a reduction over as many points as it contracts
    parts = _Parts()
    absorbed: dict[int, set[int]] = {}
    for c in sorted(lib_nodes):
        target = reduced_points(c)
        frontier = [
            (w, False, frozenset()) for ld in du.loads[c] for w in _writers_before(du, ld.tensor, c)
        ]
        seen: set[tuple[int, bool]] = set()
        while frontier and len(seen) < MERGE_DEPTH:
            s, found, path = frontier.pop()
            if (s, found) in seen:
                continue
            seen.add((s, found))
            gs = group_of[s]
            if gs in lib_set:
                if found and gs != group_of[c]:
                    parts.union(gs, group_of[c])
                    absorbed.setdefault(group_of[c], set()).update(path)
                continue
            hit = found or (bool(nodes[s].reduced_vars) and reduced_points(s) == target)
            for ld in du.loads[s]:
                for w in _writers_before(du, ld.tensor, s):
                    frontier.append((w, hit, path | {s}))
    members: dict[int, set[int]] = {}
    for g in lib_groups:
        root = parts.find(g)
        members.setdefault(root, set()).update(groups[g].node_ids)
        members[root] |= absorbed.get(g, set())
    kernel_stmts = []
    taken: set[int] = set()  # a statement absorbed on two paths is run (and counted) by one kernel
    for _, ids in sorted(members.items(), key=lambda kv: min(kv[1])):
        kernel_stmts.append(tuple(sorted(ids - taken)))
        taken |= ids
    kernel_of = {i: k for k, ids in enumerate(kernel_stmts) for i in ids}
    copies = inplace_copies(graph)
    flow = _Flow(graph, nodes, kernel_of)
    rest = tuple(
        i for i in sorted(nodes) if i not in kernel_of and i not in copies and not flow.fusable(i)
    )
    kernels: list[_Kernel] = []
    for ids in kernel_stmts:
        inside = frozenset(ids)
        run = tuple(i for i in ids if i not in copies)
        origins = [nodes[i].origin for i in ids if nodes[i].origin is not None]
        kernels.append(
            _Kernel(
                ids,
                flow.in_bytes(inside, run),
                flow.out_bytes(inside, run),
                tuple(dict.fromkeys(o.op for o in origins)),
                tuple(dict.fromkeys(o.source for o in origins)),
                origins[0].module if origins else "",
            )
        )
    return _Plan(tuple(kernels), rest)


def library_level(
    graph: EinsumGraph,
    works: dict[int, Work],
    spec: HardwareSpec,
    assumptions: Assumptions,
    launch: float,
    cache_aware_bytes: float,
) -> LibraryLevel:
    if "library_plan" not in graph.memo:  # arch-independent: found once, every GPU prices it
        graph.memo["library_plan"] = _plan(graph)
    plan: _Plan = graph.memo["library_plan"]
    rest = plan.rest
    l2 = spec.l2_bytes
    bw = spec.dram_bytes_per_s
    kernels: list[LibraryKernel] = []
    for k in plan.kernels:
        ids, in_bytes, out_bytes = k.node_ids, k.in_bytes, k.out_bytes
        nbytes = max(0.0, in_bytes - l2) + max(0.0, out_bytes - l2)
        ct = compute_time(total(works[i] for i in ids), spec, assumptions)
        mem = nbytes / bw
        kernels.append(
            LibraryKernel(
                ops=k.ops,
                sources=k.sources,
                module=k.module,
                node_ids=ids,
                in_bytes=in_bytes,
                out_bytes=out_bytes,
                dram_bytes=nbytes,
                compute_seconds=ct.seconds,
                memory_seconds=mem,
                launch_seconds=launch,
                seconds=max(ct.seconds, mem, launch),
                binding_unit=ct.binding_unit,
            )
        )
    rest_compute = 0.0
    rest_seconds = 0.0
    if rest:
        ct = compute_time(total(works[i] for i in rest), spec, assumptions)
        rest_compute = ct.seconds
        rest_seconds = max(ct.seconds, launch)
    charged = sum(k.dram_bytes for k in kernels)
    slack = sum(k.seconds - k.memory_seconds for k in kernels) + rest_seconds
    extra = max(0.0, max(0.0, cache_aware_bytes - charged) / bw - slack)
    seconds = sum(k.seconds for k in kernels) + rest_seconds + extra
    rest_launch = launch if rest else 0.0
    return LibraryLevel(
        tuple(kernels), rest, rest_compute, rest_seconds, rest_launch, extra, seconds
    )


def _writers_before(du, tensor: str, position: int) -> tuple[int, ...]:
    w = du.last_writer_before(tensor, position)
    return () if w is None else (w,)


def _narrowest(dtypes) -> DType:
    return min(dtypes, key=lambda d: d.bits)


class _Flow:
    """Where the values a kernel reads come from and where the values it writes go, on the graph's
    def-use and footprints. `kernel_of`: node id -> its library kernel."""

    def __init__(self, graph: EinsumGraph, nodes: dict, kernel_of: dict[int, int]) -> None:
        self.graph, self.du, self.fp = graph, graph.defuse, graph.footprints
        self.nodes, self.kernel_of = nodes, kernel_of

    def fusable(self, i: int) -> bool:
        """A pointwise node outside every library kernel: any kernel may fuse it."""
        return i not in self.kernel_of and not self.nodes[i].reduced_vars

    def _made_outside(self, i: int) -> bool:
        return i in self.kernel_of or not self.fusable(i)

    def root(self, tensor: str, inside: frozenset[int], depth: int = 0):
        """(root tensor, narrowest dtype on the way) of the values a kernel reads from `tensor`: the
        tensor itself when its values are made where the kernel cannot make them (an input or
        parameter, a reduction, another kernel), else the root of the one tensor a one-to-one
        pointwise writer reads element for element; None when the values could be made inside the
        kernel from smaller data (no such one-to-one chain)."""
        decl = self.graph.tensor(tensor)
        writers = self.du.writers.get(tensor, [])
        if not writers:
            return tensor, decl.dtype  # an input or parameter: its values start in memory
        if any(self._made_outside(w) for w in writers if w not in inside):
            return tensor, decl.dtype
        if len(writers) != 1 or depth > 32:
            return None
        stmt = self.nodes[writers[0]].stmt
        for ld in dict.fromkeys(stmt.loads()):
            if ld.tensor != tensor and _one_to_one(stmt, ld):
                found = self.root(ld.tensor, inside, depth + 1)
                if found is not None:
                    return found[0], _narrowest((found[1], decl.dtype, *_casts(stmt)))
        return None

    def in_bytes(self, inside: frozenset[int], run: tuple[int, ...]) -> float:
        """Bytes of values that must enter the kernel (running nodes `run`): per root, the elements
        the kernel reads of the tensor that carries them (one-to-one with the root's), at the
        narrowest width on the way."""
        stmts = {i: self.nodes[i].stmt for i in run}
        written = {s.target.tensor for s in stmts.values()}
        reading: dict[str, list[int]] = {}  # tensor -> the kernel's nodes reading it, in order (one pass)
        for i, s in stmts.items():
            for t in dict.fromkeys(ld.tensor for ld in s.loads()):
                reading.setdefault(t, []).append(i)
        per_root: dict[str, float] = {}
        for tensor in sorted(reading.keys() - written):
            found = self.root(tensor, inside)
            if found is None:
                continue
            readers = reading[tensor]
            casts = (c for i in readers for c in _casts(stmts[i]))
            dtype = _narrowest((found[1], *casts))
            count = self.fp.elements(tensor, "read", readers)
            per_root[found[0]] = max(per_root.get(found[0], 0.0), dtype.storage_bytes(count))
        return sum(per_root.values())

    def sink(self, tensor: str, writers: tuple[int, ...], inside, narrow: DType, depth=0) -> float:
        """Bytes of `tensor`'s values that must leave the kernel: an output's written elements, the
        elements a statement the kernel cannot run reads (a reduction, another kernel), or, through
        a one-to-one pointwise reader the kernel could fuse, the same of that reader's result;
        priced at the narrowest dtype on the way (`narrow`)."""
        decl = self.graph.tensor(tensor)
        narrow = _narrowest((narrow, decl.dtype))
        best = 0.0
        if decl.role is Role.OUTPUT and writers:
            best = narrow.storage_bytes(self.fp.elements(tensor, "write", writers))
        if depth > 32:
            return best
        for r in self.du.readers.get(tensor, []):
            if r in inside:
                continue
            stmt = self.nodes[r].stmt
            width = _narrowest((narrow, *_casts(stmt)))
            if self._made_outside(r):
                best = max(best, width.storage_bytes(self.fp.elements(tensor, "read", (r,))))
                continue
            loads = tuple(ld for ld in dict.fromkeys(stmt.loads()) if ld.tensor == tensor)
            target = stmt.target.tensor
            if any(_one_to_one(stmt, ld) for ld in loads) and len(self.du.writers[target]) == 1:
                best = max(best, self.sink(target, (r,), inside, width, depth + 1))
        return best

    def out_bytes(self, inside: frozenset[int], run: tuple[int, ...]) -> float:
        """The largest of the tensors the kernel writes: values of different tensors it writes may
        be functions of each other (a product and its bias-added result), so they are not added."""
        writers: dict[str, list[int]] = {}
        for i in run:
            writers.setdefault(self.nodes[i].output, []).append(i)
        best = 0.0
        for tensor in sorted(writers):
            dtype = self.graph.tensor(tensor).dtype
            best = max(best, self.sink(tensor, tuple(writers[tensor]), inside, dtype))
        return best
