"""The einsum graph's footprints and domain sizes equal isl's counts (solar.ir.polyhedral), on every
path: box accesses counted without isl, a union that covers its tensor, unions and guarded domains
counted by isl, and statement subsets; identical statements of renamed tensors share one isl count."""

from __future__ import annotations

import pytest

from solar.ir import polyhedral
from solar.ir.affine import as_affine, ge, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Call, Indirect, Load, Loop, Program, Role, Stmt, Store, TensorDecl
from solar.ir.scalar_ops import ScalarOp, Update
from solar.lift import lift

i, j, k = var("i"), var("j"), var("k")


def t(name: str, shape, role: Role = Role.INPUT, dtype: DType = DType.F32) -> TensorDecl:
    return TensorDecl(name, tuple(shape), dtype, role)


def ld(name: str, *index) -> Load:
    return Load(name, tuple(x if isinstance(x, Indirect) else as_affine(x) for x in index))


def st(loops, target, index, value, update=Update.ASSIGN, guards=()) -> Stmt:
    return Stmt(
        tuple(Loop(v, e) for v, e in loops),
        Store(target, tuple(as_affine(x) for x in index)),
        update,
        value,
        tuple(guards),
    )


def add(a, b):
    return Call(ScalarOp.ADD, (a, b))


CASES = {
    # y[i, j] = x[i, j] + x[j, i] + d[i, i] + s[2i + 1] + g[idx[i], j]; c[i] = x[i, 0] where j >= i
    "mixed": Program(
        "mixed",
        (
            t("x", (8, 8)),
            t("d", (11, 8)),
            t("s", (20,)),
            t("g", (50, 8)),
            t("idx", (8,), dtype=DType.I64),
            t("y", (8, 8), Role.OUTPUT),
            t("c", (8,), Role.OUTPUT),
            t("h", (8, 8), Role.OUTPUT),
        ),
        (
            st(
                [("i", 8), ("j", 8)],
                "y",
                (i, j),
                add(
                    add(ld("x", i, j), ld("x", j, i)),
                    add(add(ld("d", i, i), ld("s", 2 * i + 1)), ld("g", Indirect(ld("idx", i)), j)),
                ),
            ),
            st([("i", 8), ("j", 8)], "c", (i,), ld("x", i, 0), Update.ADD, (ge(j - i, 0),)),
            st([("i", 4), ("j", 8)], "h", (i, j), ld("x", i + 2, j)),
            st([("i", 4), ("j", 8)], "h", (i + 4, j), add(ld("x", i, j), ld("d", i + j, 0))),
        ),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_footprints_equal_isl_counts(name: str) -> None:
    program = CASES[name]
    graph = lift(program)
    fp = graph.footprints
    subsets = [None, (0,), (1, 2), (2, 3), (0, 3)]
    for decl in program.tensors:
        for kind in ("read", "write"):
            for ids in subsets:
                stmts = None if ids is None else tuple(program.stmts[n] for n in ids)
                expected = polyhedral.tensor_footprint(program, decl.name, kind, stmts)
                assert fp.elements(decl.name, kind, ids) == expected, (decl.name, kind, ids)
    for n, stmt in enumerate(program.stmts):
        assert fp.points(n) == polyhedral.domain_size(program, stmt)


def test_known_counts() -> None:
    fp = lift(CASES["mixed"]).footprints
    assert fp.elements("x", "read") == 64  # x[i, j] covers x
    assert fp.elements("x", "read", (1,)) == 8  # x[i, 0]
    assert fp.elements("x", "read", (2, 3)) == 48  # rows 2..5 and 0..3
    assert fp.elements("d", "read", (0,)) == 8  # the diagonal
    assert fp.elements("d", "read") == 8 + 11 - 1  # ... and d[0..10, 0], which meets it at d[0, 0]
    assert fp.elements("s", "read") == 8  # s[2i + 1]
    assert fp.elements("g", "read") == 8  # one row of g: the least any index data touches
    assert fp.elements("h", "write") == 64
    assert fp.points(1) == 8 * 9 // 2


def test_renamed_layers_share_one_isl_count() -> None:
    """Two layers alike but for their tensors' names: one isl count serves both."""
    tensors, stmts = [], []
    for n in range(2):
        x, y = f"x{n}", f"y{n}"
        tensors += [t(x, (8,)), t(y, (6,), Role.OUTPUT)]
        stmts.append(st([("i", 6)], y, (i,), add(ld(x, i), ld(x, i + 2))))
    fp = lift(Program("two", tuple(tensors), tuple(stmts))).footprints
    assert fp.elements("x0", "read") == fp.elements("x1", "read") == 8
    assert len(fp._isl) == 1
