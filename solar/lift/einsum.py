"""The einsum graph: one node per IR statement (output and operand index maps, combine and
reduction ops, extents, guards, dtypes) joined by def-use edges of tensors. The backends derive
costs from these nodes; nothing here knows a FLOP formula."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from solar.heap import settled
from solar.ir.affine import Constraint
from solar.ir.defuse import DefUse, defuse
from solar.ir.dtypes import DType
from solar.ir.nodes import (
    Call,
    Cast,
    Expr,
    IndexTerm,
    Indirect,
    Load,
    Origin,
    Program,
    Seq,
    Stmt,
    TensorDecl,
    nested,
    walk,
)
from solar.ir.printer import format_constraint, format_expr, format_store
from solar.ir.scalar_ops import ScalarOp, Update
from solar.lift.footprint import Footprints


@dataclass(frozen=True, slots=True)
class Operand:
    """One load of a node: the tensor, its index terms (affine or data-dependent) and the tensor's
    storage dtype."""

    tensor: str
    index: tuple[IndexTerm, ...]
    dtype: DType


@dataclass(frozen=True, slots=True)
class EinsumNode:
    """One statement seen as a generalised einsum.

    `combine` is the top-level scalar op of the value (casts skipped; None for a bare load or
    constant); `reduce` is the update that folds points into the target. `is_contraction` marks
    what a tensor core can run: a product of two loads, summed over variables that index both
    operands.
    `contraction_dtype` is the dtype the products are formed in (see `contraction_dtype`)."""

    id: int
    stmt: Stmt
    output: str
    output_index: tuple[IndexTerm, ...]
    operands: tuple[Operand, ...]
    reduce: Update
    reduced_vars: tuple[str, ...]
    extents: tuple[tuple[str, int], ...]
    guards: tuple[Constraint, ...]
    out_dtype: DType
    origin: Origin | None
    is_contraction: bool
    contraction_dtype: DType | None
    in_order: tuple[str, ...] = ()  # variables of the enclosing in-order loops, outermost first

    @property
    def combine(self) -> ScalarOp | None:
        return top_op(self.stmt.value)

    @property
    def equation(self) -> str:
        """The statement as text (see `equation`), printed when asked (reports, `solar einsum`)."""
        return equation(self.stmt)


@dataclass(frozen=True, slots=True)
class InOrderLoop:
    """A top-level in-order loop: its place in Program.body, its variable, its trip count (a size
    symbol resolved; None when the program leaves it free) and the ids of its body's nodes
    (consecutive: the flattened statements of the loop)."""

    position: int
    var: str
    steps: int | None
    node_ids: tuple[int, ...]


@dataclass(frozen=True)
class Edge:
    """A def-use edge writer -> reader: the tensors an earlier statement writes and a later one
    reads, in order of first use."""

    tensors: tuple[str, ...]

    @property
    def tensor(self) -> str:
        """The first tensor the edge carries."""
        return self.tensors[0]


@dataclass(frozen=True, eq=False)
class EinsumGraph:
    """The nodes by statement index (node ids are statement positions) and an edge writer ->
    reader for every pair joined by a tensor, keyed (writer, reader) in order of first use."""

    program: Program
    node_list: tuple[EinsumNode, ...]
    edges: Mapping[tuple[int, int], Edge]

    def nodes(self) -> tuple[EinsumNode, ...]:
        return self.node_list

    def node(self, node_id: int) -> EinsumNode:
        return self.node_list[node_id]

    def __iter__(self) -> Iterator[EinsumNode]:
        return iter(self.nodes())

    def __len__(self) -> int:
        return len(self.node_list)

    @property
    def tensors(self) -> tuple[TensorDecl, ...]:
        """The tensors the nodes read and write (names, shapes, dtypes, roles)."""
        return self.program.tensors

    def tensor(self, name: str) -> TensorDecl:
        return self.program.tensor(name)

    def shape(self, name: str) -> tuple[int, ...]:
        """The shape of tensor `name` with every size symbol resolved."""
        shapes = self._shapes
        if name not in shapes:
            shapes[name] = self.program.shape(name)
        return shapes[name]

    @functools.cached_property
    def _shapes(self) -> dict[str, tuple[int, ...]]:
        return {}

    @functools.cached_property
    def defuse(self) -> DefUse:
        """Writers and readers of every tensor by node id (node ids are statement positions)."""
        return defuse(self.program)

    @functools.cached_property
    def loops(self) -> tuple[InOrderLoop, ...]:
        """The program's top-level in-order loops, in program order."""
        out, first = [], 0
        symbols = dict(self.program.symbols)
        for position, item in enumerate(self.program.body):
            if not isinstance(item, Seq):
                first += 1
                continue
            n = sum(1 for _ in nested(item.body))
            steps = item.extent if isinstance(item.extent, int) else symbols.get(item.extent)
            out.append(InOrderLoop(position, item.var, steps, tuple(range(first, first + n))))
            first += n
        return tuple(out)

    @functools.cached_property
    def footprints(self) -> Footprints:
        """Accesses, footprints and domain sizes of the graph's statements, derived once."""
        return Footprints(self.program, self.nodes())

    @functools.cached_property
    def equations(self) -> tuple[str, ...]:
        """Every node's equation by id, printed once for all the reports on this graph."""
        return tuple(node.equation for node in self.nodes())

    @functools.cached_property
    def memo(self) -> dict:
        """Arch-independent results of backend passes over this graph, keyed by the pass (so
        that each further GPU costs only the pricing)."""
        return {}


# ---- lifting -------------------------------------------------------------------------------------


@settled
def lift(program: Program) -> EinsumGraph:
    """Lift every statement of `program` to an EinsumNode and connect them by def-use of tensors.

    A statement inside in-order loops lifts in its flattened form (the in-order loops in front of
    its own, see Program.stmts): its node counts extent x body; `in_order` names those loops."""
    du = defuse(program)
    nodes = []
    edges: dict[tuple[int, int], list[str]] = {}  # in order of first use, with the tensors each carries
    for i, ((seqs, _), stmt) in enumerate(zip(program.nested(), program.stmts)):
        node = lift_stmt(program, i, stmt)
        if seqs:
            node = replace(node, in_order=tuple(s.var for s in seqs))
        nodes.append(node)
        for tensor in du.uses(i):
            for w in du.writers.get(tensor, ()):
                if w >= i:
                    break
                carried = edges.setdefault((w, i), [])
                if tensor not in carried:
                    carried.append(tensor)
    return EinsumGraph(program, tuple(nodes), {k: Edge(tuple(c)) for k, c in edges.items()})


def lift_stmt(program: Program, node_id: int, stmt: Stmt) -> EinsumNode:
    operands = tuple(
        Operand(load.tensor, load.index, _dtype(program, load))
        for load in stmt.loads()
    )
    contraction = is_contraction(stmt)
    return EinsumNode(
        id=node_id,
        stmt=stmt,
        output=stmt.target.tensor,
        output_index=stmt.target.index,
        operands=operands,
        reduce=stmt.update,
        reduced_vars=stmt.reduced_vars,
        extents=tuple(program.extents(stmt).items()),
        guards=stmt.guards,
        out_dtype=program.tensor(stmt.target.tensor).dtype,
        origin=stmt.origin,
        is_contraction=contraction,
        contraction_dtype=contraction_dtype(program, stmt) if contraction else None,
    )


def _dtype(program: Program, load: Load) -> DType:
    return program.tensor(load.tensor).dtype


def strip_casts(expr: Expr) -> Expr:
    while isinstance(expr, Cast):
        expr = expr.arg
    return expr


def top_op(expr: Expr) -> ScalarOp | None:
    """The top-level scalar op of a value, looking through casts (None for a load or constant)."""
    inner = strip_casts(expr)
    return inner.op if isinstance(inner, Call) else None


def contraction_loads(stmt: Stmt) -> tuple[Load, Load] | None:
    """The two loads of `A * B` at the top of the value (each possibly under casts), else None."""
    inner = strip_casts(stmt.value)
    if not (isinstance(inner, Call) and inner.op is ScalarOp.MUL):
        return None
    a, b = (strip_casts(arg) for arg in inner.args)
    if isinstance(a, Load) and isinstance(b, Load):
        return a, b
    return None


def _index_vars(load: Load) -> frozenset[str]:
    """Loop variables an access depends on, including those inside data-dependent indices."""
    out: set[str] = set()
    for term in load.index:
        if isinstance(term, Indirect):
            out |= term.offset.variables
            for e in walk(term.value):
                if isinstance(e, Load):
                    out |= _index_vars(e)
        else:
            out |= term.variables
    return frozenset(out)


def is_contraction(stmt: Stmt) -> bool:
    """A tensor-core-shaped statement: `+=` of a product of two loads, with at least one reduced
    variable and every reduced variable indexing both operands (GEMM, batched GEMM, implicit-GEMM
    convolution with affine indices)."""
    pair = contraction_loads(stmt)
    if pair is None or stmt.update is not Update.ADD or not stmt.reduced_vars:
        return False
    va, vb = (_index_vars(load) for load in pair)
    return all(v in va and v in vb for v in stmt.reduced_vars)


def value_dtype(program: Program, expr: Expr) -> DType:
    """The narrowest dtype along a chain of casts over a load: every value the chain can produce is
    representable in it (a widening cast adds no values, a narrowing cast rounds into the narrow
    type), so a unit that multiplies in this dtype computes the same products."""
    chain: list[DType] = []
    while isinstance(expr, Cast):
        chain.append(expr.dtype)
        expr = expr.arg
    if isinstance(expr, Load):
        chain.append(program.tensor(expr.tensor).dtype)
    return min(chain, key=lambda d: d.bits)


def common_dtype(a: DType, b: DType) -> DType:
    """A dtype in which products of an `a` and a `b` value can be formed exactly.

    Equal widths of one kind share a tensor-core path (e4m3 x e5m2 is a native fp8 MMA, s8 x u8 a
    native IMMA) except f16 with bf16, which meet in f32. Otherwise the wider type when it holds the
    narrower one's values (float holds narrower ints and floats), else f16 for 8-bit mixes (holds
    every i8/u8/f8/i4/fp4 value) and f32 for the rest."""
    if a is b:
        return a
    wide, narrow = (a, b) if a.bits >= b.bits else (b, a)
    if wide.bits == narrow.bits:
        if wide.kind == narrow.kind and wide.bits <= 8:
            return wide
        return DType.F16 if wide.bits <= 8 else DType.F32
    if wide.is_float or not narrow.is_float:
        return wide
    return DType.F32


def contraction_dtype(program: Program, stmt: Stmt) -> DType:
    """The dtype in which the products of a contraction are formed (the MAC's tensor-core key)."""
    pair = contraction_loads(stmt)
    assert pair is not None
    inner = strip_casts(stmt.value)
    assert isinstance(inner, Call)
    a, b = (value_dtype(program, arg) for arg in inner.args)
    return common_dtype(a, b)


# ---- printing ------------------------------------------------------------------------------------

REDUCE_SYMBOL = {Update.ADD: "Σ", Update.MUL: "Π", Update.MAX: "max", Update.MIN: "min"}


def equation(stmt: Stmt) -> str:
    """`C[i, j] += A[i, k] * B[k, j]  (Σ k)`: the statement body plus its reduced variables."""
    body = f"{format_store(stmt.target)} {stmt.update.value} {format_expr(stmt.value)}"
    if stmt.reduced_vars and stmt.update in REDUCE_SYMBOL:
        body += f"  ({REDUCE_SYMBOL[stmt.update]} {', '.join(stmt.reduced_vars)})"
    return body


def format_node(node: EinsumNode) -> str:
    op = "-" if node.origin is None else f"{node.origin.op}#{node.origin.instance}"
    extents = ", ".join(f"{v}={n}" for v, n in node.extents)
    dtypes = ", ".join(dict.fromkeys(f"{o.tensor}:{o.dtype.text}" for o in node.operands))
    dtypes = (
        f"{dtypes} -> {node.output}:{node.out_dtype.text}"
        if dtypes
        else f"-> {node.output}:{node.out_dtype.text}"
    )
    parts = [f"[{node.id}]", op, node.equation, f"{{{extents}}}"]
    if node.guards:
        parts.append("where " + " and ".join(format_constraint(g) for g in node.guards))
    if node.in_order:
        parts.append(f"in order {', '.join(node.in_order)}")
    parts.append(dtypes)
    if node.is_contraction:
        parts.append(f"contraction({node.contraction_dtype.text})")
    return "  ".join(parts)


def format_graph(graph: EinsumGraph) -> str:
    """One line per node: id, origin op, equation, extents, guards, dtypes (for `solar einsum`)."""
    return "\n".join(format_node(n) for n in graph.nodes()) + "\n"
