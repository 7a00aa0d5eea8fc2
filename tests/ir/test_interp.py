"""The reference interpreter against plain numpy: contractions, guards, sliding windows,
quasi-affine and indirect indices, every scalar op, chunking, and its error messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solar.errors import IRVerifyError
from solar.ir.affine import as_affine, eq, ge, lt, var
from solar.ir.dtypes import DType
from solar.ir.interp import domain_points, program_cost, run, run_all
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Index,
    Indirect,
    Load,
    Loop,
    Program,
    Role,
    Stmt,
    Store,
    TensorDecl,
)
from solar.ir.scalar_ops import ScalarOp, Update

F32 = DType.F32
RNG = np.random.default_rng(0)
i, j, k, b, q = var("i"), var("j"), var("k"), var("b"), var("q")


# ---- builders ------------------------------------------------------------------------------------


def tensor(name: str, shape, dtype: DType = F32, role: Role = Role.INPUT) -> TensorDecl:
    return TensorDecl(name, tuple(shape), dtype, role)


def out(name: str, shape, dtype: DType = F32) -> TensorDecl:
    return tensor(name, shape, dtype, Role.OUTPUT)


def ld(name: str, *index) -> Load:
    return Load(name, tuple(t if isinstance(t, Indirect) else as_affine(t) for t in index))


def call(op: ScalarOp, *args) -> Call:
    return Call(op, tuple(args))


def mul(*args) -> Call:
    expr = args[0]
    for a in args[1:]:
        expr = call(ScalarOp.MUL, expr, a)
    return expr


def stmt(loops, target: str, index, update: Update, value, guards=()) -> Stmt:
    return Stmt(
        tuple(Loop(v, e) for v, e in loops),
        Store(target, tuple(as_affine(t) for t in index)),
        update,
        value,
        tuple(guards),
    )


def program(tensors, stmts, symbols=()) -> Program:
    return Program("p", tuple(tensors), tuple(stmts), tuple(symbols))


def rand(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def matmul(M: int | str = 16, N: int | str = 12, K: int | str = 8, symbols=()) -> Program:
    return program(
        [tensor("A", (M, K)), tensor("B", (K, N)), out("C", (M, N))],
        [
            stmt([("i", M), ("j", N)], "C", (i, j), Update.ASSIGN, Const(0)),
            stmt(
                [("i", M), ("j", N), ("k", K)],
                "C",
                (i, j),
                Update.ADD,
                mul(ld("A", i, k), ld("B", k, j)),
            ),
        ],
        symbols,
    )


# ---- contractions --------------------------------------------------------------------------------


@pytest.mark.parametrize("use_einsum", [True, False])
def test_matmul(use_einsum: bool) -> None:
    A, B = rand(16, 8), rand(8, 12)
    got = run(matmul(), {"A": A, "B": B}, use_einsum=use_einsum)
    assert set(got) == {"C"} and got["C"].dtype == np.float32
    np.testing.assert_allclose(got["C"], A @ B, rtol=1e-5, atol=1e-5)


def test_matmul_with_symbols() -> None:
    A, B = rand(20, 8), rand(8, 12)
    p = matmul(M="M", symbols=[("M", 20)])
    np.testing.assert_allclose(run(p, {"A": A, "B": B})["C"], A @ B, rtol=1e-5, atol=1e-5)


def test_einsum_fast_path_matches_generic_path() -> None:
    # batched matmul with a cast factor, and a three-factor product with a repeated operand index
    A = rand(3, 5, 7).astype(np.float16)
    B, X, Y = rand(3, 7, 4), rand(6, 9), rand(9)
    p = program(
        [
            tensor("A", (3, 5, 7), DType.F16),
            tensor("B", (3, 7, 4)),
            tensor("X", (6, 9)),
            tensor("Y", (9,)),
            out("C", (3, 5, 4)),
            out("Z", (6,)),
        ],
        [
            stmt([("b", 3), ("i", 5), ("j", 4)], "C", (b, i, j), Update.ASSIGN, Const(0.0)),
            stmt(
                [("b", 3), ("i", 5), ("j", 4), ("k", 7)],
                "C",
                (b, i, j),
                Update.ADD,
                mul(Cast(F32, ld("A", b, i, k)), ld("B", b, k, j)),
            ),
            stmt([("i", 6)], "Z", (i,), Update.ASSIGN, Const(1.0)),
            stmt(
                [("i", 6), ("j", 9)],
                "Z",
                (i,),
                Update.ADD,
                mul(ld("X", i, j), ld("Y", j), ld("X", i, j)),
            ),
        ],
    )
    inputs = {"A": A, "B": B, "X": X, "Y": Y}
    fast, slow = run(p, inputs), run(p, inputs, use_einsum=False)
    for name in ("C", "Z"):
        np.testing.assert_allclose(fast[name], slow[name], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fast["C"], A.astype(np.float32) @ B, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fast["Z"], 1 + (X * X) @ Y, rtol=1e-5, atol=1e-5)


def test_contraction_over_a_slice_of_the_operands() -> None:
    # loop extents smaller than the tensors: the fast path must slice the operands
    A, B = rand(10, 10), rand(10, 10)
    p = program(
        [tensor("A", (10, 10)), tensor("B", (10, 10)), out("C", (4, 3))],
        [
            stmt([("i", 4), ("j", 3)], "C", (i, j), Update.ASSIGN, Const(0)),
            stmt(
                [("i", 4), ("j", 3), ("k", 5)],
                "C",
                (i, j),
                Update.ADD,
                mul(ld("A", i, k), ld("B", k, j)),
            ),
        ],
    )
    for use_einsum in (True, False):
        got = run(p, {"A": A, "B": B}, use_einsum=use_einsum)["C"]
        np.testing.assert_allclose(got, A[:4, :5] @ B[:5, :3], rtol=1e-5, atol=1e-5)


def test_fast_path_is_taken_for_contractions_only() -> None:
    from solar.ir.interp import _allocate, _try_einsum

    p = matmul()
    arrays = _allocate(p, {"A": rand(16, 8), "B": rand(8, 12)})
    assert _try_einsum(p, p.stmts[1], arrays, [16, 12, 8])
    assert not _try_einsum(p, p.stmts[0], arrays, [16, 12])  # an assignment
    guarded = Stmt(p.stmts[1].loops, p.stmts[1].target, Update.ADD, p.stmts[1].value, (ge(i, k),))
    assert not _try_einsum(p, guarded, arrays, [16, 12, 8])


# ---- guards and sliding windows ------------------------------------------------------------------


def test_causal_guard() -> None:
    S = 9
    x = rand(S, S)
    p = program(
        [tensor("x", (S, S)), out("s", (S,))],
        [
            stmt([("q", S)], "s", (q,), Update.ASSIGN, Const(0)),
            stmt([("q", S), ("k", S)], "s", (q,), Update.ADD, ld("x", q, k), guards=[ge(q, k)]),
        ],
    )
    np.testing.assert_allclose(run(p, {"x": x})["s"], np.tril(x).sum(1), rtol=1e-5, atol=1e-5)


def conv1d(N=2, C=3, L=11, F=4, R=3, stride=2, pad=1) -> tuple[Program, int]:
    O = (L + 2 * pad - R) // stride + 1
    n, c, f, o, r = var("n"), var("c"), var("f"), var("o"), var("r")
    pos = stride * o + r - pad
    p = program(
        [tensor("x", (N, C, L)), tensor("w", (F, C, R)), out("y", (N, F, O))],
        [
            stmt([("n", N), ("f", F), ("o", O)], "y", (n, f, o), Update.ASSIGN, Const(0)),
            stmt(
                [("n", N), ("f", F), ("o", O), ("c", C), ("r", R)],
                "y",
                (n, f, o),
                Update.ADD,
                mul(ld("x", n, c, pos), ld("w", f, c, r)),
                guards=[ge(pos, 0), lt(pos, L)],
            ),
        ],
    )
    return p, O


def test_strided_padded_conv1d() -> None:
    p, O = conv1d()
    x, w = rand(2, 3, 11), rand(4, 3, 3)
    ref = np.zeros((2, 4, O), np.float32)
    for n in range(2):
        for f in range(4):
            for o in range(O):
                for c in range(3):
                    for r in range(3):
                        t = 2 * o + r - 1
                        if 0 <= t < 11:
                            ref[n, f, o] += x[n, c, t] * w[f, c, r]
    np.testing.assert_allclose(run(p, {"x": x, "w": w})["y"], ref, rtol=1e-5, atol=1e-5)


def test_strided_padded_conv2d() -> None:
    N, C, H, W, F, R = 2, 3, 7, 6, 4, 3
    OH, OW = (H + 2 - R) // 2 + 1, (W + 2 - R) // 2 + 1
    n, c, f, oh, ow, kh, kw = (var(v) for v in ("n", "c", "f", "oh", "ow", "kh", "kw"))
    h, w_ = 2 * oh + kh - 1, 2 * ow + kw - 1
    p = program(
        [tensor("x", (N, C, H, W)), tensor("w", (F, C, R, R)), out("y", (N, F, OH, OW))],
        [
            stmt(
                [("n", N), ("f", F), ("oh", OH), ("ow", OW)],
                "y",
                (n, f, oh, ow),
                Update.ASSIGN,
                Const(0),
            ),
            stmt(
                [("n", N), ("f", F), ("oh", OH), ("ow", OW), ("c", C), ("kh", R), ("kw", R)],
                "y",
                (n, f, oh, ow),
                Update.ADD,
                mul(ld("x", n, c, h, w_), ld("w", f, c, kh, kw)),
                guards=[ge(h, 0), lt(h, H), ge(w_, 0), lt(w_, W)],
            ),
        ],
    )
    x, wt = rand(N, C, H, W), rand(F, C, R, R)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((N, F, OH, OW), np.float32)
    for a in range(OH):
        for bb in range(OW):
            patch = xp[:, :, 2 * a : 2 * a + R, 2 * bb : 2 * bb + R]
            ref[:, :, a, bb] = np.einsum("nchw,fchw->nf", patch, wt)
    got = run(p, {"x": x, "w": wt})["y"]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        run(p, {"x": x, "w": wt}, chunk_elements=5)["y"], ref, rtol=1e-4, atol=1e-5
    )


def test_sparse_and_assigning_guards() -> None:
    # an equality guard passes 1/16 of the points (flat path); a guarded assignment keeps the old
    # content where the guard fails; a guarded assignment with a reduced variable keeps one point
    x = rand(16, 16)
    p = program(
        [tensor("x", (16, 16)), out("d", (16,)), out("t", (16, 16)), out("last", (16,))],
        [
            stmt([("i", 16)], "d", (i,), Update.ASSIGN, Const(0)),
            stmt([("i", 16), ("j", 16)], "d", (i,), Update.ADD, ld("x", i, j), guards=[eq(i, j)]),
            stmt([("i", 16), ("j", 16)], "t", (i, j), Update.ASSIGN, Const(0)),
            stmt(
                [("i", 16), ("j", 16)], "t", (i, j), Update.ASSIGN, ld("x", i, j), guards=[ge(i, j)]
            ),
            stmt(
                [("i", 16), ("j", 16)],
                "last",
                (i,),
                Update.ASSIGN,
                ld("x", i, i),
                guards=[ge(i, j)],
            ),
        ],
    )
    for chunk in (1 << 22, 3):
        got = run(p, {"x": x}, chunk_elements=chunk)
        np.testing.assert_allclose(got["d"], np.diag(x), rtol=1e-6)
        np.testing.assert_array_equal(got["t"], np.tril(x))
        np.testing.assert_array_equal(got["last"], np.diag(x))


def test_guarded_integer_max() -> None:
    x = RNG.integers(-100, 100, (6, 6)).astype(np.int32)
    p = program(
        [tensor("x", (6, 6), DType.I32), out("m", (6,), DType.I32)],
        [
            stmt([("i", 6)], "m", (i,), Update.ASSIGN, Const(-1000)),
            stmt([("i", 6), ("j", 6)], "m", (i,), Update.MAX, ld("x", i, j), guards=[ge(i, j)]),
        ],
    )
    np.testing.assert_array_equal(run(p, {"x": x})["m"], [x[r, : r + 1].max() for r in range(6)])


# ---- index forms ---------------------------------------------------------------------------------


def test_floordiv_mod_reshape() -> None:
    x = rand(3, 4)
    p = program(
        [tensor("x", (3, 4)), out("y", (12,)), out("z", (3, 4))],
        [
            stmt([("i", 12)], "y", (i,), Update.ASSIGN, ld("x", i // 4, i % 4)),
            stmt([("i", 3), ("j", 4)], "z", (i, j), Update.ASSIGN, ld("y", 4 * i + j)),
            # transposed write through a quasi-affine target index
        ],
    )
    got = run(p, {"x": x})
    np.testing.assert_array_equal(got["y"], x.reshape(-1))
    np.testing.assert_array_equal(got["z"], x)


def test_quasi_affine_target_index() -> None:
    x = rand(12)
    p = program(
        [tensor("x", (12,)), out("y", (3, 4)), out("s", (4,))],
        [
            stmt([("i", 12)], "y", (i // 4, i % 4), Update.ASSIGN, ld("x", i)),
            stmt([("j", 4)], "s", (j,), Update.ASSIGN, Const(0)),
            stmt([("i", 12)], "s", (i % 4,), Update.ADD, ld("x", i)),
        ],
    )
    got = run(p, {"x": x})
    np.testing.assert_array_equal(got["y"], x.reshape(3, 4))
    np.testing.assert_allclose(got["s"], x.reshape(3, 4).sum(0), rtol=1e-6)


def test_max_reduction_with_neg_inf_init() -> None:
    x = rand(5, 7)
    p = program(
        [tensor("x", (5, 7)), out("m", (5,)), out("lo", (5,))],
        [
            stmt([("i", 5)], "m", (i,), Update.ASSIGN, Const(float("-inf"))),
            stmt([("i", 5), ("j", 7)], "m", (i,), Update.MAX, ld("x", i, j)),
            stmt([("i", 5)], "lo", (i,), Update.ASSIGN, Const(float("inf"))),
            stmt([("i", 5), ("j", 7)], "lo", (i,), Update.MIN, ld("x", i, j), guards=[ge(j, i)]),
        ],
    )
    got = run(p, {"x": x})
    np.testing.assert_array_equal(got["m"], x.max(1))
    np.testing.assert_array_equal(got["lo"], [x[r, r:].min() for r in range(5)])


def test_scalar_target_and_product_update() -> None:
    x = rand(6) * 0.5 + 1
    p = program(
        [tensor("x", (6,)), out("s", ()), out("g", ()), out("prod", (1,))],
        [
            stmt([], "s", (), Update.ASSIGN, Const(0)),
            stmt([("i", 6)], "s", (), Update.ADD, ld("x", i)),
            stmt([], "g", (), Update.ASSIGN, Const(0)),
            stmt([("i", 6)], "g", (), Update.ADD, ld("x", i), guards=[ge(i, 2)]),
            stmt([("j", 1)], "prod", (j,), Update.ASSIGN, Const(1)),
            stmt([("j", 1), ("i", 6)], "prod", (j,), Update.MUL, ld("x", i)),
        ],
    )
    got = run(p, {"x": x})
    assert got["s"].shape == ()
    np.testing.assert_allclose(got["s"], x.sum(), rtol=1e-6)
    np.testing.assert_allclose(got["g"], x[2:].sum(), rtol=1e-6)
    np.testing.assert_allclose(got["prod"], [x.prod()], rtol=1e-6)


def test_indirect_gather() -> None:
    E = rand(10, 4)
    idx = np.array([3, 0, 9, 3, 7], dtype=np.int64)
    d = var("d")
    p = program(
        [tensor("E", (10, 4)), tensor("I", (5,), DType.I64), out("y", (5, 4))],
        [stmt([("i", 5), ("d", 4)], "y", (i, d), Update.ASSIGN, ld("E", Indirect(ld("I", i)), d))],
    )
    np.testing.assert_array_equal(run(p, {"E": E, "I": idx})["y"], np.take(E, idx, axis=0))
    # an affine offset is added to the data-dependent index: windows E2[I[i] + d - 1]
    E2 = rand(14)
    p2 = program(
        [tensor("E2", (14,)), tensor("I", (5,), DType.I64), out("y", (5, 4))],
        [
            stmt(
                [("i", 5), ("d", 4)],
                "y",
                (i, d),
                Update.ASSIGN,
                ld("E2", Indirect(ld("I", i), d - 1)),
            )
        ],
    )
    got = run(p2, {"E2": E2, "I": idx + 1})["y"]
    np.testing.assert_array_equal(got, E2[idx[:, None] + np.arange(4)])


def test_index_iota_and_casts() -> None:
    x = np.array([1.7, -1.7, 2.5, 300.2], dtype=np.float32)
    p = program(
        [
            tensor("x", (4,)),
            out("iota", (3, 4), DType.I32),
            out("fl", (3, 4)),
            out("tr", (4,), DType.I32),
            out("h", (4,), DType.F16),
            out("u", (4,), DType.U8),
        ],
        [
            stmt([("i", 3), ("j", 4)], "iota", (i, j), Update.ASSIGN, Index(4 * i + j)),
            stmt([("i", 3), ("j", 4)], "fl", (i, j), Update.ASSIGN, Cast(F32, Index(i - j))),
            stmt([("i", 4)], "tr", (i,), Update.ASSIGN, Cast(DType.I32, ld("x", i))),
            stmt([("i", 4)], "h", (i,), Update.ASSIGN, ld("x", i)),
            stmt(
                [("i", 4)], "u", (i,), Update.ASSIGN, Cast(DType.U8, call(ScalarOp.ABS, ld("x", i)))
            ),
        ],
    )
    got = run(p, {"x": x})
    np.testing.assert_array_equal(got["iota"], np.arange(12).reshape(3, 4))
    assert got["iota"].dtype == np.int32 and got["h"].dtype == np.float16
    np.testing.assert_array_equal(got["fl"], np.subtract.outer(np.arange(3), np.arange(4)))
    np.testing.assert_array_equal(got["tr"], [1, -1, 2, 300])
    np.testing.assert_array_equal(got["h"], x.astype(np.float16))
    np.testing.assert_array_equal(got["u"], np.abs(x).astype(np.uint8))


def test_float_constants_keep_float32() -> None:
    x = rand(64)
    p = program(
        [tensor("x", (64,)), out("y", (64,), DType.F64)],
        [stmt([("i", 64)], "y", (i,), Update.ASSIGN, mul(ld("x", i), Const(0.1)))],
    )
    # the product is float32 math, then widened by the store: not a float64 product
    np.testing.assert_array_equal(run(p, {"x": x})["y"], (x * np.float32(0.1)).astype(np.float64))


# ---- every scalar op once ------------------------------------------------------------------------

REFERENCE = {
    ScalarOp.ADD: lambda a, b: a + b,
    ScalarOp.SUB: lambda a, b: a - b,
    ScalarOp.MUL: lambda a, b: a * b,
    ScalarOp.DIV: lambda a, b: a / b,
    ScalarOp.NEG: lambda a: -a,
    ScalarOp.ABS: np.abs,
    ScalarOp.MAX: np.maximum,
    ScalarOp.MIN: np.minimum,
    ScalarOp.EXP: np.exp,
    ScalarOp.LOG: np.log,
    ScalarOp.SQRT: np.sqrt,
    ScalarOp.RSQRT: lambda a: 1 / np.sqrt(a),
    ScalarOp.RECIP: lambda a: 1 / a,
    ScalarOp.TANH: np.tanh,
    ScalarOp.SIGMOID: lambda a: 1 / (1 + np.exp(-a)),
    ScalarOp.ERF: np.vectorize(math.erf),
    ScalarOp.POW: np.power,
    ScalarOp.SIN: np.sin,
    ScalarOp.COS: np.cos,
    ScalarOp.LOG1P: np.log1p,
    ScalarOp.EXPM1: np.expm1,
    ScalarOp.FLOOR: np.floor,
    ScalarOp.CEIL: np.ceil,
    ScalarOp.ROUND: np.round,
    ScalarOp.SIGN: np.sign,
    ScalarOp.LT: np.less,
    ScalarOp.LE: np.less_equal,
    ScalarOp.GT: np.greater,
    ScalarOp.GE: np.greater_equal,
    ScalarOp.EQ: np.equal,
    ScalarOp.NE: np.not_equal,
    ScalarOp.WHERE: np.where,
    ScalarOp.AND: np.logical_and,
    ScalarOp.OR: np.logical_or,
    ScalarOp.NOT: np.logical_not,
    ScalarOp.XOR: np.logical_xor,
    ScalarOp.BITAND: lambda a, b: a & b,
    ScalarOp.BITOR: lambda a, b: a | b,
    ScalarOp.BITXOR: lambda a, b: a ^ b,
    ScalarOp.BITNOT: lambda a: ~a,
    ScalarOp.SHL: lambda a, b: a << b,
    ScalarOp.SHR: lambda a, b: a >> b,
    ScalarOp.RANDOM: None,  # random draws: checked by their statistics below
    ScalarOp.RANDN: None,
}
BOOL_OPS = {ScalarOp.AND, ScalarOp.OR, ScalarOp.NOT, ScalarOp.XOR}
INT_OPS = {ScalarOp.BITAND, ScalarOp.BITOR, ScalarOp.BITXOR, ScalarOp.BITNOT, ScalarOp.SHL, ScalarOp.SHR}
DRAW_OPS = {ScalarOp.RANDOM: (0.5, (1 / 12) ** 0.5), ScalarOp.RANDN: (0.0, 1.0)}


def test_every_scalar_op_has_a_reference() -> None:
    assert set(REFERENCE) == set(ScalarOp)


@pytest.mark.parametrize("op", [op for op in ScalarOp if op not in DRAW_OPS], ids=lambda op: op.value)
def test_scalar_op(op: ScalarOp) -> None:
    n = 16
    a = (RNG.uniform(0.1, 2.0, n)).astype(np.float32)
    bb = (RNG.uniform(0.1, 2.0, n)).astype(np.float32)
    bb[:4] = a[:4]  # some equal pairs for the comparisons
    cond = RNG.uniform(size=n) > 0.5
    dt, args_np = F32, [a, bb]
    if op in BOOL_OPS:
        dt, args_np = DType.BOOL, [cond, RNG.uniform(size=n) > 0.5]
    if op in INT_OPS:
        dt, args_np = DType.I32, [RNG.integers(-50, 50, n).astype(np.int32), RNG.integers(0, 5, n).astype(np.int32)]
    arity = {ScalarOp.WHERE: 3}.get(op, 1 if op in _UNARY else 2)
    if op is ScalarOp.WHERE:
        decls = [tensor("c", (n,), DType.BOOL), tensor("a", (n,)), tensor("b", (n,))]
        args_np, names = [cond, a, bb], ["c", "a", "b"]
    else:
        names = ["a", "b"][:arity]
        args_np = args_np[:arity]
        decls = [tensor(nm, (n,), dt) for nm in names]
    ref = np.asarray(REFERENCE[op](*args_np))
    p = program(
        decls + [out("y", (n,), DType.BOOL if ref.dtype == bool else DType.I32 if op in INT_OPS else F32)],
        [stmt([("i", n)], "y", (i,), Update.ASSIGN, call(op, *(ld(nm, i) for nm in names)))],
    )
    got = run(p, dict(zip(names, args_np)))["y"]
    np.testing.assert_allclose(got, ref.astype(got.dtype), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", list(DRAW_OPS), ids=lambda op: op.value)
def test_random_draws(op: ScalarOp) -> None:
    """random(stream, counter) / randn(stream, counter): a function of the pair (the same pair
    gives the same value), with the distribution's mean and std over 20000 counters, and streams
    that differ."""
    n = 20000
    p = program(
        [out("y", (2, n))],
        [stmt([("s", 2), ("i", n)], "y", (var("s"), i), Update.ASSIGN, call(op, Index(var("s")), Index(i)))],
    )
    y = run(p, {})["y"]
    np.testing.assert_array_equal(run(p, {})["y"], y)
    mean, std = DRAW_OPS[op]
    assert abs(y.mean() - mean) < 0.02 and abs(y.std() - std) < 0.02
    assert abs(np.corrcoef(y[0], y[1])[0, 1]) < 0.05
    if op is ScalarOp.RANDOM:
        assert y.min() >= 0.0 and y.max() < 1.0


_UNARY = {
    ScalarOp.BITNOT,
    ScalarOp.NEG, ScalarOp.ABS, ScalarOp.EXP, ScalarOp.LOG, ScalarOp.SQRT, ScalarOp.RSQRT,
    ScalarOp.RECIP, ScalarOp.TANH, ScalarOp.SIGMOID, ScalarOp.ERF, ScalarOp.SIN, ScalarOp.COS,
    ScalarOp.LOG1P, ScalarOp.EXPM1, ScalarOp.FLOOR, ScalarOp.CEIL, ScalarOp.ROUND, ScalarOp.SIGN,
    ScalarOp.NOT,
}  # fmt: skip


# ---- chunking, bookkeeping -----------------------------------------------------------------------


def test_tiny_chunks_give_the_same_answer() -> None:
    A, B = rand(16, 8), rand(8, 12)
    ref = run(matmul(), {"A": A, "B": B}, use_einsum=False)["C"]
    for chunk in (1, 7, 96, 100):
        got = run(matmul(), {"A": A, "B": B}, use_einsum=False, chunk_elements=chunk)["C"]
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    p, _ = conv1d()
    x, w = rand(2, 3, 11), rand(4, 3, 3)
    ref = run(p, {"x": x, "w": w})["y"]
    for chunk in (1, 5, 13):
        np.testing.assert_allclose(
            run(p, {"x": x, "w": w}, chunk_elements=chunk)["y"], ref, rtol=1e-5, atol=1e-6
        )


def test_large_matmul_generic_path_runs_in_chunks() -> None:
    A, B = rand(256, 256), rand(256, 256)
    got = run(matmul(256, 256, 256), {"A": A, "B": B}, use_einsum=False, chunk_elements=1 << 20)[
        "C"
    ]
    np.testing.assert_allclose(got, A @ B, rtol=1e-3, atol=1e-3)


def test_statement_reading_its_own_target_sees_the_old_content() -> None:
    # every value is computed before any write, also when the domain is cut into blocks
    x = rand(8)
    p = program(
        [tensor("x", (8,)), out("y", (8,)), out("s", (8,))],
        [
            stmt([("i", 8)], "y", (i,), Update.ASSIGN, ld("x", i)),
            stmt([("i", 8)], "y", (i,), Update.ASSIGN, ld("y", 7 - i)),
            stmt([("i", 8)], "s", (i,), Update.ASSIGN, Const(1)),
            stmt([("i", 8), ("j", 8)], "s", (i,), Update.ADD, ld("s", j)),
        ],
    )
    for chunk in (1 << 22, 2):
        got = run(p, {"x": x}, chunk_elements=chunk)
        np.testing.assert_array_equal(got["y"], x[::-1])
        np.testing.assert_array_equal(got["s"], np.full(8, 9.0))


def test_uninitialised_temps_show_up() -> None:
    p = program(
        [tensor("x", (4,)), tensor("t", (4,), F32, Role.TEMP), out("y", (4,))],
        [stmt([("i", 4)], "y", (i,), Update.ASSIGN, call(ScalarOp.ADD, ld("x", i), ld("t", i)))],
    )
    assert np.isnan(run(p, {"x": rand(4)})["y"]).all()
    everything = run_all(p, {"x": rand(4)})
    assert set(everything) == {"x", "t", "y"}


def test_domain_points_and_cost() -> None:
    p = matmul(16, 12, 8)
    assert domain_points(p, p.stmts[1]) == 16 * 12 * 8
    assert program_cost(p) == 16 * 12 + 16 * 12 * 8


# ---- errors --------------------------------------------------------------------------------------


def test_shape_mismatch_and_missing_input() -> None:
    with pytest.raises(IRVerifyError, match=r"'A'.*\(16, 8\).*got \(8, 16\)"):
        run(matmul(), {"A": rand(8, 16), "B": rand(8, 12)})
    with pytest.raises(IRVerifyError, match=r"no value given for input 'B'"):
        run(matmul(), {"A": rand(16, 8)})
    with pytest.raises(IRVerifyError, match=r"'Q'"):
        run(matmul(), {"A": rand(16, 8), "B": rand(8, 12), "Q": rand(1)})


def test_out_of_bounds_read_names_statement_and_tensor() -> None:
    p = program(
        [tensor("x", (8,)), out("y", (8,))],
        [stmt([("i", 8)], "y", (i,), Update.ASSIGN, ld("x", 2 * i - 1), guards=[ge(i, 1)])],
    )
    with pytest.raises(
        IRVerifyError, match=r"(?s)^reads x .*index 9 in dim 0 at point i=5.*y\[i\] = x\[2\*i - 1\]"
    ):
        run(p, {"x": rand(8)})


def test_out_of_bounds_contraction_is_reported() -> None:
    p = program(
        [tensor("A", (4, 4)), out("C", (4,))],
        [
            stmt([("i", 4)], "C", (i,), Update.ASSIGN, Const(0)),
            stmt([("i", 4), ("k", 5)], "C", (i,), Update.ADD, ld("A", i, k)),
        ],
    )
    with pytest.raises(IRVerifyError, match=r"reads A"):
        run(p, {"A": rand(4, 4)})


def test_out_of_bounds_write_and_indirect() -> None:
    p = program(
        [tensor("x", (8,)), out("y", (8,))],
        [stmt([("i", 8)], "y", (i + 1,), Update.ASSIGN, ld("x", i))],
    )
    with pytest.raises(IRVerifyError, match=r"writes y"):
        run(p, {"x": rand(8)})
    g = program(
        [tensor("E", (4,)), tensor("I", (3,), DType.I32), out("y", (3,))],
        [stmt([("i", 3)], "y", (i,), Update.ASSIGN, ld("E", Indirect(ld("I", i))))],
    )
    with pytest.raises(IRVerifyError, match=r"reads E .*index 4"):
        run(g, {"E": rand(4), "I": np.array([0, 4, 1], np.int32)})
