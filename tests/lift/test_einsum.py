"""The einsum graph: node fields, contraction detection, def-use edges, printing."""

from __future__ import annotations

from solar.ir.affine import ge, var
from solar.ir.dtypes import DType
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Indirect,
    Load,
    Loop,
    Origin,
    Program,
    Role,
    Stmt,
    Store,
    TensorDecl,
)
from solar.ir.scalar_ops import ScalarOp, Update
from solar.lift import EinsumGraph, Operand, format_graph, lift
from solar.ir.printer import format_affine, format_constraint, format_index_term
from solar.lift.einsum import common_dtype

i, j, k = var("i"), var("j"), var("k")
F32 = DType.F32


def t(name: str, shape: tuple, dtype: DType = F32, role: Role = Role.INPUT) -> TensorDecl:
    return TensorDecl(name, shape, dtype, role)


def mul(a, b) -> Call:
    return Call(ScalarOp.MUL, (a, b))


def matmul(dtype: DType = F32, origin: Origin | None = Origin("aten.mm.default", 0)) -> Program:
    A, B = Load("A", (i, k)), Load("B", (k, j))
    return Program(
        "mm",
        (t("A", (8, 4), dtype), t("B", (4, 6), dtype), t("C", (8, 6), F32, Role.OUTPUT)),
        (
            Stmt(
                (Loop("i", 8), Loop("j", 6)),
                Store("C", (i, j)),
                Update.ASSIGN,
                Const(0.0),
                origin=origin,
            ),
            Stmt(
                (Loop("i", 8), Loop("j", 6), Loop("k", 4)),
                Store("C", (i, j)),
                Update.ADD,
                mul(A, B),
                origin=origin,
            ),
        ),
    )


def test_matmul_nodes() -> None:
    g = lift(matmul())
    assert isinstance(g, EinsumGraph)
    init, mm = g.nodes()
    assert (init.id, mm.id) == (0, 1)
    assert init.combine is None and init.reduce is Update.ASSIGN and not init.is_contraction
    assert mm.output == "C" and tuple(map(format_affine, mm.output_index)) == ("i", "j")
    assert mm.operands == (Operand("A", (i, k), F32), Operand("B", (k, j), F32))
    assert mm.combine is ScalarOp.MUL and mm.reduce is Update.ADD
    assert mm.reduced_vars == ("k",)
    assert mm.extents == (("i", 8), ("j", 6), ("k", 4))
    assert mm.guards == ()
    assert mm.out_dtype is F32
    assert mm.origin == Origin("aten.mm.default", 0)
    assert mm.is_contraction and mm.contraction_dtype is F32
    assert mm.equation == "C[i, j] += A[i, k] * B[k, j]  (Σ k)"


def test_def_use_edges() -> None:
    prog = matmul()
    x = Program(
        "chain",
        prog.tensors + (t("D", (8, 6), F32, Role.OUTPUT),),
        prog.stmts
        + (
            Stmt(
                (Loop("i", 8), Loop("j", 6)),
                Store("D", (i, j)),
                Update.ASSIGN,
                Call(ScalarOp.EXP, (Load("C", (i, j)),)),
            ),
        ),
    )
    g = lift(x)
    # the accumulating statement uses the initialised C; the exp reads C written by both.
    assert set(g.edges) == {(0, 1), (0, 2), (1, 2)}
    assert g.edges[1, 2].tensor == "C"
    assert g.program is x and len(g) == 3


def test_causal_guard_and_affine_index_forms() -> None:
    q, kk, d = var("q"), var("kk"), var("d")
    prog = Program(
        "scores",
        (t("Q", (16, 8)), t("K", (16, 8)), t("S", (16, 16), F32, Role.OUTPUT)),
        (
            Stmt(
                (Loop("q", 16), Loop("kk", 16), Loop("d", 8)),
                Store("S", (q, kk)),
                Update.ADD,
                mul(Load("Q", (q, d)), Load("K", (kk, d))),
                guards=(ge(q, kk),),
            ),
        ),
    )
    (node,) = lift(prog).nodes()
    assert node.is_contraction and tuple(map(format_constraint, node.guards)) == ("-kk + q >= 0",)
    conv = Program(
        "conv1d",
        (t("X", (20,)), t("W", (3,)), t("Y", (9,), F32, Role.OUTPUT)),
        (
            Stmt(
                (Loop("o", 9), Loop("r", 3)),
                Store("Y", (var("o"),)),
                Update.ADD,
                mul(Load("X", (2 * var("o") + var("r"),)), Load("W", (var("r"),))),
            ),
        ),
    )
    (node,) = lift(conv).nodes()
    assert tuple(map(format_index_term, node.operands[0].index)) == ("2*o + r",)
    assert node.is_contraction


def test_not_contractions() -> None:
    def one(value, update=Update.ADD, target=("i",)) -> Stmt:
        return Stmt(
            (Loop("i", 8), Loop("k", 4)), Store("y", tuple(var(v) for v in target)), update, value
        )

    A, b, s = Load("A", (i, k)), Load("b", (k,)), Load("s", ())
    tensors = (
        t("A", (8, 4)),
        t("b", (4,)),
        t("s", ()),
        t("c", (8,)),
        t("y", (8,), F32, Role.OUTPUT),
    )
    cases = {
        "scaled product": one(mul(mul(A, b), s)),
        "max reduction": one(mul(A, b), Update.MAX),
        "reduced var in one operand": one(mul(A, Load("c", (i,)))),
        "sum of loads": one(Call(ScalarOp.ADD, (A, b))),
    }
    for name, stmt in cases.items():
        (node,) = lift(Program("p", tensors, (stmt,))).nodes()
        assert not node.is_contraction, name
    # no reduced variable: an outer product is not a contraction
    outer = Stmt(
        (Loop("i", 8),), Store("y", (i,)), Update.ADD, mul(Load("c", (i,)), Load("c", (i,)))
    )
    (node,) = lift(Program("p", tensors, (outer,))).nodes()
    assert not node.is_contraction


def test_casts_and_mixed_dtypes() -> None:
    # f16 operands widened to f32 for accumulation still multiply f16 values: the f16 tensor path.
    A, B = Load("A", (i, k)), Load("B", (k, j))
    stmt = Stmt(
        (Loop("i", 8), Loop("j", 6), Loop("k", 4)),
        Store("C", (i, j)),
        Update.ADD,
        mul(Cast(F32, A), Cast(F32, B)),
    )
    tensors = (
        t("A", (8, 4), DType.F16),
        t("B", (4, 6), DType.F16),
        t("C", (8, 6), F32, Role.OUTPUT),
    )
    (node,) = lift(Program("p", tensors, (stmt,))).nodes()
    assert node.is_contraction and node.contraction_dtype is DType.F16
    assert node.combine is ScalarOp.MUL
    assert common_dtype(DType.I8, DType.F16) is DType.F16  # weight-only int8
    assert common_dtype(DType.F16, DType.BF16) is F32
    assert common_dtype(DType.F8E4M3, DType.F8E5M2) is DType.F8E4M3
    assert common_dtype(DType.I8, DType.F8E4M3) is DType.F16
    assert common_dtype(DType.F32, DType.F16) is F32


def test_indirect_operands_and_format() -> None:
    d = var("d")
    prog = Program(
        "embed",
        (
            t("E", (100, 16), DType.BF16, Role.PARAM),
            t("I", (8,), DType.I64),
            t("y", (8, 16), DType.BF16, Role.OUTPUT),
        ),
        (
            Stmt(
                (Loop("i", 8), Loop("d", 16)),
                Store("y", (i, d)),
                Update.ASSIGN,
                Load("E", (Indirect(Load("I", (i,))), d)),
                origin=Origin("aten.embedding.default", 3, "model.py:7"),
            ),
        ),
    )
    (node,) = lift(prog).nodes()
    assert [o.tensor for o in node.operands] == ["E", "I"]
    assert tuple(map(format_index_term, node.operands[0].index)) == ("ind(I[i])", "d")
    assert node.operands[1].dtype is DType.I64
    assert node.combine is None and not node.is_contraction
    text = format_graph(lift(prog))
    assert text.count("\n") == 1
    assert "aten.embedding.default#3" in text and "y[i, d] = E[ind(I[i]), d]" in text
    assert "i=8, d=16" in text and "E:bf16" in text


def test_format_graph_one_line_per_node() -> None:
    text = format_graph(lift(matmul()))
    lines = text.splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("[1]") and "contraction(f32)" in lines[1] and "(Σ k)" in lines[1]
