"""Work of einsum nodes: multiply-accumulates a tensor core may run and scalar ops per cost class,
derived only from the iteration-domain size and the one scalar-op table (no per-op formulas).

Why this is a lower bound on the work: every point of a statement's domain (guards included,
counted exactly by isl) evaluates the value expression once and folds it into the target once; each
scalar op counts `OPS[op].flops` in its cost class, and casts, loads, constants and index values
count nothing. This is the work of the program as written: ops a smarter implementation could skip
(`x * 1`, subexpressions shared between points) are not recognised, so the frontends must not emit
redundant ops."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from solar.ir.dtypes import DType
from solar.ir.nodes import Call, Cast, Load, walk
from solar.ir.scalar_ops import OPS, CostClass, ScalarOp
from solar.lift.einsum import EinsumGraph, EinsumNode, strip_casts

MacKey = tuple[DType, bool]  # (dtype the products are formed in, framework allows TF32 for the op)
SimtKey = tuple[CostClass, str]  # (cost class, SIMT dtype key of the spec: fp64/fp32/fp16/bf16)

# SIMT rate key of a statement's dtype; every other dtype (f32, ints, bool, fp8, ...) runs as fp32.
SIMT_KEY: dict[DType, str] = {DType.F64: "fp64", DType.F16: "fp16", DType.BF16: "bf16"}
# Narrowest first: a statement is priced at the rate of the narrowest float type it touches, which
# is at least as fast as the others on every GPU (see compute.SIMT_EMULATION): mixing types only
# lowers a bound.
SIMT_KEY_ORDER = ("fp16", "bf16", "fp32", "fp64")


def simt_key(dtype: DType) -> str:
    return SIMT_KEY.get(dtype, "fp32")


@dataclass(frozen=True, slots=True)
class Work:
    """Additive work record. `macs` are contraction multiply-accumulates (2 FLOPs each) that a
    tensor core or the FMA pipe may run; `simt` counts every other op (in FLOPs of the op table) per
    (cost class, SIMT dtype key). Both are sorted tuples so that Work is hashable and canonical."""

    macs: tuple[tuple[MacKey, int], ...] = ()
    simt: tuple[tuple[SimtKey, int], ...] = ()

    @staticmethod
    def make(macs: dict[MacKey, int] | None = None, simt: dict[SimtKey, int] | None = None) -> Work:
        m = tuple(sorted(((k, int(n)) for k, n in (macs or {}).items() if n), key=_mac_sort))
        s = tuple(sorted(((k, int(n)) for k, n in (simt or {}).items() if n), key=_simt_sort))
        return Work(m, s)

    @property
    def mac_count(self) -> int:
        return sum(n for _, n in self.macs)

    @property
    def contraction_flops(self) -> int:
        return 2 * self.mac_count

    @property
    def flops(self) -> int:
        return self.contraction_flops + sum(n for _, n in self.simt)

    @property
    def is_zero(self) -> bool:
        return not self.macs and not self.simt

    def __add__(self, other: Work) -> Work:
        macs: Counter = Counter(dict(self.macs))
        macs.update(dict(other.macs))
        simt: Counter = Counter(dict(self.simt))
        simt.update(dict(other.simt))
        return Work.make(dict(macs), dict(simt))

    def __radd__(self, other: int | Work) -> Work:
        return self if other == 0 else self + other  # lets sum() start from 0


def _mac_sort(item: tuple[MacKey, int]) -> tuple:
    (dtype, tf32), _ = item
    return (dtype.text, tf32)


def _simt_sort(item: tuple[SimtKey, int]) -> tuple:
    (cls, key), _ = item
    return (cls.value, key)


def total(works: Iterable[Work]) -> Work:
    macs: Counter = Counter()
    simt: Counter = Counter()
    for w in works:
        for k, n in w.macs:
            macs[k] += n
        for k, n in w.simt:
            simt[k] += n
    return Work.make(dict(macs), dict(simt))


# ---- derivation ----------------------------------------------------------------------------------


def _narrowest(keys: Iterable[str]) -> str:
    return min(keys, key=SIMT_KEY_ORDER.index)


def instance_simt_keys(graph: EinsumGraph) -> dict[int, str]:
    """The SIMT key of every op instance: the narrowest among its statements' keys. The fp32
    temporaries a lowering upcasts to (an RMS norm's or SDPA's statistics of bf16 data) are the
    decomposition's choice, not the op's: a kernel for the op may keep them in the input's
    precision, so every statement of the instance is priced at least as fast (docs/BOUNDS.md §2).
    An upcast the user wrote (`x.float()`) is its own op, and its consumers keep their dtype."""
    keys: dict[int, set[str]] = {}
    scans = _scans(graph)
    for node in graph.nodes():
        if node.origin is not None:
            keys.setdefault(node.origin.instance, set()).add(scans[node.id][0])
    return {k: _narrowest(v) for k, v in keys.items()}


def _scans(graph: EinsumGraph) -> dict[int, tuple[str, tuple[ScalarOp, ...]]]:
    """(SIMT key, the ops its points evaluate) of every node, from one walk of each value."""
    if "work_scans" not in graph.memo:
        graph.memo["work_scans"] = {node.id: _scan(node) for node in graph.nodes()}
    return graph.memo["work_scans"]


def _scan(node: EinsumNode) -> tuple[str, tuple[ScalarOp, ...]]:
    """The node's SIMT key and the scalar ops of its value, less the product of a contraction (a
    MAC with the += update). The key is the narrowest float type among its output, its operands
    and its casts (fp32 when none has a key of its own): pricing a mixed statement at its narrowest
    type can only make the bound lower, so it stays sound."""
    of = {o.tensor: o.dtype for o in node.operands}
    skip = strip_casts(node.stmt.value) if node.is_contraction else None
    dtypes = [node.out_dtype]
    ops: list[ScalarOp] = []
    for e in walk(node.stmt.value):
        if isinstance(e, Load):
            dtypes.append(of[e.tensor])
        elif isinstance(e, Cast):
            dtypes.append(e.dtype)
        elif isinstance(e, Call) and e is not skip:
            ops.append(e.op)
    return _narrowest(simt_key(d) for d in dtypes), tuple(ops)


def node_work(graph: EinsumGraph, node: EinsumNode, instance_key: str | None = None) -> Work:
    """Work of one einsum node.

    Every Call in the value counts OPS[op].flops per domain point in its cost class; the update op
    (+=, *= → FMA class; max=, min= → COMPARE, from the op table) counts once per point. For a
    contraction the top-level MUL and the += update form one multiply-accumulate per point instead
    (2 FLOPs), recorded as a MAC keyed by the product dtype and the op's TF32 flag, and NOT also as
    FMA-class ops."""
    stmt = node.stmt
    points = graph.footprints.points(node.id)
    if points == 0:
        return Work()
    key, ops = _scans(graph)[node.id]
    if instance_key is not None:
        key = _narrowest((key, instance_key))
    simt: Counter = Counter()
    for op in ops:
        _count_op(simt, op, key, points)
    macs: dict[MacKey, int] = {}
    if node.is_contraction:
        assert node.contraction_dtype is not None
        tf32 = stmt.origin.allow_tf32 if stmt.origin is not None else False
        macs[(node.contraction_dtype, tf32)] = points
    elif stmt.update.op is not None:
        _count_op(simt, stmt.update.op, key, points)
    return Work.make(macs, dict(simt))


def _count_op(simt: Counter, op: ScalarOp, key: str, points: int) -> None:
    info = OPS[op]
    if info.cost is not CostClass.FREE:
        simt[(info.cost, key)] += info.flops * points


def graph_work(graph: EinsumGraph) -> dict[int, Work]:
    """Work of every node, keyed by node id; SIMT work at its op instance's key (derived once per
    graph: work does not depend on the GPU)."""
    if "work" not in graph.memo:
        keys = instance_simt_keys(graph)

        def key(node: EinsumNode) -> str | None:
            return None if node.origin is None else keys.get(node.origin.instance)

        graph.memo["work"] = {node.id: node_work(graph, node, key(node)) for node in graph.nodes()}
    return graph.memo["work"]
