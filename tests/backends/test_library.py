"""The library level (solar.backends.library) and write-back of outputs that fit in L2, with exact
values on hand-built programs (docs/BOUNDS.md §3 and §15)."""

from __future__ import annotations

from solar.backends import Assumptions, analyze
from solar.backends.compute import compute_time
from solar.backends.library import is_library_contraction
from solar.backends.work import graph_work, total
from solar.hardware import get_spec
from solar.ir.affine import var
from solar.ir.dtypes import DType
from solar.ir.nodes import Call, Const, Load, Loop, Origin, Program, Role, Stmt, Store, TensorDecl
from solar.ir.scalar_ops import ScalarOp, Update
from solar.lift import lift

BF16, F32 = DType.BF16, DType.F32
H200 = get_spec("H200-SXM")
L2, BW = H200.l2_bytes, H200.dram_bytes_per_s
i, j, k, h = var("i"), var("j"), var("k"), var("h")


def _t(name, shape, dtype=BF16, role=Role.TEMP):
    return TensorDecl(name, shape, dtype, role)


def _o(op: str, instance: int) -> Origin:
    return Origin(op, instance, f"model.py:{instance + 1}")


def _mm(out, a, b, m, n, kk, origin, a_index=None, b_index=None):
    """out[i, j] = Σ_k a[i, k] · b[k, j] (init and contraction, one op instance)."""
    return (
        Stmt(
            (Loop("i", m), Loop("j", n)),
            Store(out, (i, j)),
            Update.ASSIGN,
            Const(0.0),
            origin=origin,
        ),
        Stmt(
            (Loop("i", m), Loop("j", n), Loop("k", kk)),
            Store(out, (i, j)),
            Update.ADD,
            Call(ScalarOp.MUL, (Load(a, a_index or (i, k)), Load(b, b_index or (k, j)))),
            origin=origin,
        ),
    )


def _pointwise(out, value, m, n, origin):
    return Stmt(
        (Loop("i", m), Loop("j", n)), Store(out, (i, j)), Update.ASSIGN, value, origin=origin
    )


def mm_bias_relu(m: int, n: int, kk: int) -> Program:
    """y = relu(x @ w + b): three eager ops (mm, add, relu)."""
    return Program(
        "mm_bias_relu",
        (
            _t("x", (m, kk), role=Role.INPUT),
            _t("w", (kk, n), role=Role.PARAM),
            _t("b", (n,), role=Role.PARAM),
            _t("c", (m, n)),
            _t("d", (m, n)),
            _t("y", (m, n), role=Role.OUTPUT),
        ),
        (
            *_mm("c", "x", "w", m, n, kk, _o("aten.mm.default", 0)),
            _pointwise(
                "d",
                Call(ScalarOp.ADD, (Load("c", (i, j)), Load("b", (j,)))),
                m,
                n,
                _o("aten.add.Tensor", 1),
            ),
            _pointwise(
                "y",
                Call(ScalarOp.MAX, (Load("d", (i, j)), Const(0.0))),
                m,
                n,
                _o("aten.relu.default", 2),
            ),
        ),
    )


# ---- write-back: output bytes that fit in L2 need not reach DRAM ---------------------------------


def _copy(n: int) -> Program:
    return Program(
        "add1",
        (_t("x", (n,), F32, Role.INPUT), _t("y", (n,), F32, Role.OUTPUT)),
        (
            Stmt(
                (Loop("i", n),),
                Store("y", (i,)),
                Update.ASSIGN,
                Call(ScalarOp.ADD, (Load("x", (i,)), Const(1.0))),
                origin=_o("aten.add.Tensor", 0),
            ),
        ),
    )


def test_an_output_below_l2_is_not_charged_as_a_dram_write():
    a = analyze(_copy(1 << 20), H200)  # 4 MiB in, 4 MiB out < L2 = 60 MiB
    assert a.totals.dram_bytes == 4 << 20  # the read only
    assert a.unfused.memory_seconds == (4 << 20) / BW
    assert (
        a.library.seconds == a.fused.seconds == max((4 << 20) / BW, H200.min_kernel_seconds.value)
    )
    old = analyze(_copy(1 << 20), H200, Assumptions(writeback=False))
    assert old.totals.dram_bytes == 8 << 20  # every output byte in DRAM at the end
    assert any("write-back L2" in line for line in a.assumptions.describe())


def test_an_output_above_l2_is_charged_beyond_l2():
    n = 1 << 25  # 128 MiB each way
    a = analyze(_copy(n), H200)
    assert a.totals.dram_bytes == 4 * n + (4 * n - L2)
    assert a.unfused.memory_seconds == (4 * n + 4 * n - L2) / BW


# ---- the library level ------------------------------------------------------------------------


def test_mm_bias_relu_is_one_library_kernel_with_exact_boundary_bytes():
    m, n, kk = 16384, 16384, 64  # bf16: x, w 2 MiB each, y 512 MiB
    prog = mm_bias_relu(m, n, kk)
    a = analyze(prog, H200)
    lib = a.library_level
    (kernel,) = lib.kernels
    assert kernel.ops == ("aten.mm.default",) and kernel.node_ids == (0, 1)
    assert kernel.in_bytes == 2 * (m * kk + kk * n)  # x and w enter the kernel
    assert kernel.out_bytes == 2 * m * n  # y (bias and relu fused as its epilogue) leaves it
    assert kernel.dram_bytes == 2 * m * n - L2  # inputs fit in L2: only the output beyond L2
    work = total(w for nid, w in graph_work(lift(prog)).items() if nid in (0, 1))
    assert kernel.compute_seconds == compute_time(work, H200).seconds
    assert kernel.seconds == kernel.memory_seconds == (2 * m * n - L2) / BW  # memory-bound
    assert lib.rest_node_ids == ()  # no reduction outside the kernel
    # the traffic no kernel was charged for (the inputs and the bias) hides in no slack
    uncharged = 2 * (m * kk + kk * n) + 2 * n
    assert lib.extra_seconds == uncharged / BW
    assert a.library.seconds == kernel.seconds + uncharged / BW
    assert a.fused.seconds <= a.library.seconds <= a.unfused.seconds


def mlp(m: int, hidden: int, d: int) -> Program:
    """y = relu(x @ w1) @ w2: two library kernels, the hidden activation between them."""
    return Program(
        "mlp",
        (
            _t("x", (m, d), role=Role.INPUT),
            _t("w1", (d, hidden), role=Role.PARAM),
            _t("w2", (hidden, d), role=Role.PARAM),
            _t("c", (m, hidden)),
            _t("a", (m, hidden)),
            _t("y", (m, d), role=Role.OUTPUT),
        ),
        (
            *_mm("c", "x", "w1", m, hidden, d, _o("aten.mm.default", 0)),
            _pointwise(
                "a",
                Call(ScalarOp.MAX, (Load("c", (i, j)), Const(0.0))),
                m,
                hidden,
                _o("aten.relu.default", 1),
            ),
            *_mm("y", "a", "w2", m, d, hidden, _o("aten.mm.default", 2)),
        ),
    )


def test_the_hidden_activation_of_an_mlp_crosses_dram_at_the_library_level():
    m, hidden, d = 65536, 4096, 64  # hidden activation: 512 MiB of bf16
    a = analyze(mlp(m, hidden, d), H200)
    k1, k2 = a.library_level.kernels
    act = 2 * m * hidden
    assert k1.out_bytes == act and k2.in_bytes == act + 2 * hidden * d
    assert (
        k1.dram_bytes
        == (2 * (m * d + d * hidden) - L2 if 2 * (m * d + d * hidden) > L2 else 0) + act - L2
    )
    assert k2.dram_bytes == (act + 2 * hidden * d - L2) + max(0, 2 * m * d - L2)
    assert a.library.seconds >= (k1.dram_bytes + k2.dram_bytes) / BW
    assert a.fused.seconds < a.library.seconds <= a.unfused.seconds


def test_matrix_vector_and_dot_products_are_not_library_contractions():
    prog = mm_bias_relu(64, 1, 32)  # N = 1: a matrix-vector product
    graph = lift(prog)
    assert not any(is_library_contraction(n) for n in graph.nodes())
    a = analyze(prog, H200)
    assert a.library_level.kernels == () and a.library.seconds == a.cache_aware.seconds
    assert any(is_library_contraction(n) for n in lift(mm_bias_relu(64, 2, 32)).nodes())


def attention(s: int, dh: int) -> Program:
    """o = softmax(q kᵀ) v written as separate ops (a manual attention, as torch.compile matches)."""
    red = Loop("k", s)
    sc = Origin("aten.bmm.default", 0, "model.py:1")
    sm = Origin("aten._softmax.default", 1, "model.py:2")
    pv = Origin("aten.bmm.default", 2, "model.py:3")
    two = (Loop("i", s), Loop("j", s))
    return Program(
        "attn",
        (
            _t("q", (s, dh), role=Role.INPUT),
            _t("kt", (dh, s), role=Role.INPUT),
            _t("v", (s, dh), role=Role.INPUT),
            _t("sc", (s, s), F32),
            _t("mx", (s,), F32),
            _t("e", (s, s), F32),
            _t("sm", (s,), F32),
            _t("p", (s, s)),
            _t("o", (s, dh), role=Role.OUTPUT),
        ),
        (
            *_mm("sc", "q", "kt", s, s, dh, sc),
            Stmt(
                (Loop("i", s),), Store("mx", (i,)), Update.ASSIGN, Const(float("-inf")), origin=sm
            ),
            Stmt((Loop("i", s), red), Store("mx", (i,)), Update.MAX, Load("sc", (i, k)), origin=sm),
            Stmt(
                two,
                Store("e", (i, j)),
                Update.ASSIGN,
                Call(ScalarOp.EXP, (Call(ScalarOp.SUB, (Load("sc", (i, j)), Load("mx", (i,)))),)),
                origin=sm,
            ),
            Stmt((Loop("i", s),), Store("sm", (i,)), Update.ASSIGN, Const(0.0), origin=sm),
            Stmt((Loop("i", s), red), Store("sm", (i,)), Update.ADD, Load("e", (i, k)), origin=sm),
            Stmt(
                two,
                Store("p", (i, j)),
                Update.ASSIGN,
                Call(ScalarOp.DIV, (Load("e", (i, j)), Load("sm", (i,)))),
                origin=sm,
            ),
            *_mm("o", "p", "v", s, dh, s, pv),
        ),
    )


def test_a_manual_attention_is_one_library_kernel():
    s, dh = 8192, 64
    a = analyze(attention(s, dh), H200)
    (kernel,) = a.library_level.kernels  # q kᵀ, the softmax and p v: one attention core
    assert kernel.ops == ("aten.bmm.default", "aten._softmax.default")
    assert kernel.in_bytes == 2 * 3 * s * dh and kernel.out_bytes == 2 * s * dh
    assert a.library_level.rest_node_ids == ()


def test_a_further_gpu_prices_the_kernels_found_once_as_a_fresh_graph_would():
    """The library plan (kernels, bytes in and out) is kept with the graph; every GPU after the
    first prices it and gets exactly what a freshly lifted graph gives."""
    from solar.backends.bounds import analyze_graph

    prog = mlp(4096, 8192, 1024)
    shared = lift(prog)
    for arch in ("H200-SXM", "L4", "B200", "A100-SXM4-80GB"):
        spec = get_spec(arch)
        got, fresh = analyze_graph(shared, spec), analyze_graph(lift(prog), spec)
        assert got.library_level == fresh.library_level
        assert (got.fused, got.unfused, got.library) == (fresh.fused, fresh.unfused, fresh.library)
    assert "library_plan" in shared.memo


def test_one_lp_solve_serves_a_work_mix_at_another_size_exactly():
    """Doubling every amount of a work mix scales the LP's columns by an exact power of two, so
    the solver sees the same numbers: one solve, and exactly twice the time."""
    from solar.backends import compute

    def mix_work(m: int):
        return total(graph_work(lift(mlp(m, 512, 256))).values())

    one, two = mix_work(1024), mix_work(2048)
    assert len(one.macs + one.simt) > 1  # several classes: the LP, not the one-class formula
    compute._solve.cache_clear()
    compute._highs.cache_clear()
    a, b = compute_time(one, H200), compute_time(two, H200)
    info = compute._highs.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    assert b.seconds == 2 * a.seconds and b.binding_unit == a.binding_unit
    assert b.by_unit == {u: 2 * s for u, s in a.by_unit.items()}
