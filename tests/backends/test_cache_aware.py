"""The cache-aware bound: dependency-forced re-reads and capacity-forced contraction traffic, on
hand-built IR programs (no torch). Expected values are exact integers derived from the formulas in
docs/BOUNDS.md, never copied from solar's output."""

from __future__ import annotations

import dataclasses
import math

import pytest

from solar.backends import Assumptions, analyze
from solar.backends.algebra import ceil_sqrt
from solar.backends.capacity import smith_words
from solar.backends.reread import find_rereads
from solar.hardware import get_spec
from solar.ir.affine import const, ge, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Call, Const, Load, Loop, Program, Role, Stmt, Store, TensorDecl
from solar.ir.scalar_ops import ScalarOp, Update
from solar.ir.verify import verify as verify_program
from solar.lift import lift

F32, I8, I32 = DType.F32, DType.I8, DType.I32
H200 = get_spec("H200-SXM")
L4 = get_spec("L4")
i, j, k, n_, c_, h_, w_ = (var(v) for v in ("i", "j", "k", "n", "c", "h", "w"))
ZERO = const(0)

NW = Assumptions(writeback=False)  # byte rules with every output byte in DRAM at the end (write-back: test_library.py)


def t(name: str, shape: tuple, dtype: DType = F32, role: Role = Role.INPUT) -> TensorDecl:
    return TensorDecl(name, shape, dtype, role)


def loops(**extents: int) -> tuple[Loop, ...]:
    return tuple(Loop(v, e) for v, e in extents.items())


def mul(a, b) -> Call:
    return Call(ScalarOp.MUL, (a, b))


def sub(a, b) -> Call:
    return Call(ScalarOp.SUB, (a, b))


def normalize(n: int) -> Program:
    """y = x / ||x||_F as s = 0; s += x*x; s = rsqrt(s); y = x*s."""
    x, s = Load("x", (i,)), Load("s", (ZERO,))
    return Program(
        "normalize",
        (t("x", (n,)), t("s", (1,), F32, Role.TEMP), t("y", (n,), F32, Role.OUTPUT)),
        (
            Stmt((), Store("s", (ZERO,)), Update.ASSIGN, Const(0.0)),
            Stmt(loops(i=n), Store("s", (ZERO,)), Update.ADD, mul(x, x)),
            Stmt((), Store("s", (ZERO,)), Update.ASSIGN, Call(ScalarOp.RSQRT, (s,))),
            Stmt(loops(i=n), Store("y", (i,)), Update.ASSIGN, mul(x, s)),
        ),
    )


def test_normalize_huge_tensor_rereads_all_but_s() -> None:
    n = 1 << 30  # 4.29 GB of fp32, far more than the 132 MB on chip
    prog = normalize(n)
    verify_program(prog)
    S = H200.onchip_bytes
    # L2 + SMs x (L1/shared + registers + 32 KiB allowance for uniform/predicate registers etc.)
    assert S == 62914560 + 132 * (262144 + 262144 + 32768)
    X = 4 * n
    a = analyze(prog, H200, NW)
    tr = a.traffic
    assert tr.compulsory_bytes == 2 * X
    assert tr.dependency_forced_bytes == X - S
    assert tr.capacity_forced_bytes == 0
    assert tr.cache_aware_bytes == a.totals.cache_aware_dram_bytes == 3 * X - S
    assert a.cache_aware.seconds == (3 * X - S) / H200.dram_bytes_per_s
    assert a.cache_aware.bottleneck == "memory"
    ratio = a.cache_aware.seconds / a.fused.seconds
    assert math.isclose(ratio, (3 * X - S) / (2 * X), rel_tol=1e-12)
    assert 1.48 < ratio < 1.49
    (r,) = tr.rereads
    assert (r.tensor, r.stat, r.consumer, r.groups, r.group_elements) == ("x", "s", 3, 1, n)


def test_normalize_on_chip_tensor_costs_nothing_more() -> None:
    a = analyze(normalize(1 << 20), H200, NW)  # 4 MiB < S
    (r,) = a.traffic.rereads  # the pattern is found, and forces nothing: the slice fits
    assert r.group_elements == 1 << 20 and r.bytes == 0
    assert a.traffic.dependency_forced_bytes == 0
    assert a.traffic.cache_aware_bytes == a.traffic.compulsory_bytes == 8 * (1 << 20)
    assert dataclasses.replace(a.cache_aware, level="fused") == a.fused


def batch_norm(N: int, C: int, H: int, W: int) -> Program:
    """Train-mode batch norm: per-channel mean and variance over (n, h, w), then normalise."""
    x = Load("x", (n_, c_, h_, w_))
    mean, var_ = Load("mean", (c_,)), Load("var", (c_,))
    count = N * H * W
    full = loops(n=N, c=C, h=H, w=W)
    centred = sub(x, mean)
    return Program(
        "bn",
        (
            t("x", (N, C, H, W)),
            t("mean", (C,), F32, Role.TEMP),
            t("var", (C,), F32, Role.TEMP),
            t("y", (N, C, H, W), F32, Role.OUTPUT),
        ),
        (
            Stmt(loops(c=C), Store("mean", (c_,)), Update.ASSIGN, Const(0.0)),
            Stmt(full, Store("mean", (c_,)), Update.ADD, x),
            Stmt(loops(c=C), Store("mean", (c_,)), Update.ASSIGN, mul(mean, Const(1 / count))),
            Stmt(loops(c=C), Store("var", (c_,)), Update.ASSIGN, Const(0.0)),
            Stmt(full, Store("var", (c_,)), Update.ADD, mul(centred, centred)),
            Stmt(
                loops(c=C),
                Store("var", (c_,)),
                Update.ASSIGN,
                Call(
                    ScalarOp.RSQRT,
                    (Call(ScalarOp.ADD, (mul(var_, Const(1 / count)), Const(1e-5))),),
                ),
            ),
            Stmt(full, Store("y", (n_, c_, h_, w_)), Update.ASSIGN, mul(centred, var_)),
        ),
    )


def test_batch_norm_channel_slices_larger_than_s() -> None:
    N, C, H, W = 64, 4, 1024, 1024  # one channel: 64 Mi elements = 256 MiB > S
    prog = batch_norm(N, C, H, W)
    verify_program(prog)
    S = H200.onchip_bytes
    slice_bytes = 4 * N * H * W
    a = analyze(prog, H200, NW)
    tr = a.traffic
    assert tr.compulsory_bytes == 2 * 4 * N * C * H * W
    assert tr.dependency_forced_bytes == C * (slice_bytes - S)
    # both statistics (mean and rstd) are found; each gives the same per-channel slices
    found = {(r.stat, r.groups, r.group_elements) for r in tr.rereads}
    assert found == {("mean", C, N * H * W), ("var", C, N * H * W)}
    assert a.cache_aware.seconds == (tr.compulsory_bytes + C * (slice_bytes - S)) / 4.8e12
    assert H200.dram_bytes_per_s == 4.8e12
    # the eager bound charges the re-read too: any eager execution moves these bytes
    assert a.totals.unfused_dram_bytes >= tr.cache_aware_bytes
    assert a.unfused.seconds >= a.cache_aware.seconds


def test_batch_norm_small_channels_force_nothing() -> None:
    a = analyze(batch_norm(8, 64, 32, 32), H200, NW)  # 32 KiB per channel
    assert a.traffic.rereads and a.traffic.dependency_forced_bytes == 0
    assert a.cache_aware.seconds == a.fused.seconds


def softmax(rows: int, cols: int) -> Program:
    """As the torch frontend lowers it: row max; out = exp(x - max); row sum; recip; out *= sum."""
    x, m, s, out = Load("x", (i, j)), Load("m", (i, ZERO)), Load("s", (i, ZERO)), Load("y", (i, j))
    return Program(
        "softmax",
        (
            t("x", (rows, cols)),
            t("m", (rows, 1), F32, Role.TEMP),
            t("y", (rows, cols), F32, Role.OUTPUT),
            t("s", (rows, 1), F32, Role.TEMP),
        ),
        (
            Stmt(loops(i=rows), Store("m", (i, ZERO)), Update.ASSIGN, Const(-math.inf)),
            Stmt(loops(i=rows, j=cols), Store("m", (i, ZERO)), Update.MAX, x),
            Stmt(
                loops(i=rows, j=cols),
                Store("y", (i, j)),
                Update.ASSIGN,
                Call(ScalarOp.EXP, (sub(x, m),)),
            ),
            Stmt(loops(i=rows), Store("s", (i, ZERO)), Update.ASSIGN, Const(0.0)),
            Stmt(loops(i=rows, j=cols), Store("s", (i, ZERO)), Update.ADD, out),
            Stmt(loops(i=rows), Store("s", (i, ZERO)), Update.ASSIGN, Call(ScalarOp.RECIP, (s,))),
            Stmt(loops(i=rows, j=cols), Store("y", (i, j)), Update.ASSIGN, mul(out, s)),
        ),
    )


@pytest.mark.parametrize(("rows", "cols"), [(1 << 16, 1 << 14), (4, 1 << 26)])
def test_softmax_rows_force_rereads_only_when_a_row_exceeds_s(rows: int, cols: int) -> None:
    prog = softmax(rows, cols)
    verify_program(prog)
    S = L4.onchip_bytes
    a = analyze(prog, L4, NW)
    (r,) = a.traffic.rereads
    assert (r.tensor, r.stat, r.consumer, r.groups, r.group_elements) == ("x", "m", 2, rows, cols)
    assert a.traffic.dependency_forced_bytes == rows * max(0, 4 * cols - S)
    if 4 * cols <= S:  # 64 KiB rows, 4 GiB in all: every row fits, nothing is forced
        assert a.cache_aware.seconds == a.fused.seconds
    else:
        assert a.cache_aware.seconds > a.fused.seconds


def test_hold_width_is_the_narrowest_the_value_is_stored_in() -> None:
    # a bf16 output: a partial output held or spilled in bf16 takes 2 bytes per element
    n = 1 << 30
    base = normalize(n)
    prog = Program(
        base.name, base.tensors[:2] + (t("y", (n,), DType.BF16, Role.OUTPUT),), base.stmts
    )
    (r,) = find_rereads(lift(prog), H200.onchip_bytes)
    assert r.hold_bits == 16 and r.bytes == 2 * n - H200.onchip_bytes


def test_an_input_the_program_overwrites_is_not_analysed() -> None:
    n = 1 << 30
    base = normalize(n)
    first = Stmt(loops(i=n), Store("x", (i,)), Update.ASSIGN, Const(1.0))
    prog = Program(base.name, base.tensors, (first,) + base.stmts)
    assert find_rereads(lift(prog), H200.onchip_bytes) == ()


# ---- structures that must NOT force a re-read ---------------------------------------------------


def _with(prog: Program, *stmts: Stmt, extra: tuple = ()) -> Program:
    return Program(prog.name, prog.tensors + extra, prog.stmts + stmts)


def test_no_reread_when_the_consumer_is_reduced_again() -> None:
    # z = Σ_i x_i * s: a one-pass algorithm exists (s * Σ x), so nothing may be charged
    n = 1 << 30
    base = normalize(n)
    prog = Program(
        "reduced",
        (t("x", (n,)), t("s", (1,), F32, Role.TEMP), t("z", (1,), F32, Role.OUTPUT)),
        base.stmts[:3]
        + (
            Stmt((), Store("z", (ZERO,)), Update.ASSIGN, Const(0.0)),
            Stmt(
                loops(i=n),
                Store("z", (ZERO,)),
                Update.ADD,
                mul(Load("x", (i,)), Load("s", (ZERO,))),
            ),
        ),
    )
    verify_program(prog)
    assert find_rereads(lift(prog), H200.onchip_bytes) == ()


def test_no_reread_when_the_statistic_is_of_another_tensor() -> None:
    # y = x * rsqrt(Σ z²): x's elements are not in the reduced slice
    n = 1 << 30
    base = normalize(n)
    z = Load("z", (i,))
    prog = Program(
        "other",
        base.tensors + (t("z", (n,)),),
        (base.stmts[0], Stmt(loops(i=n), Store("s", (ZERO,)), Update.ADD, mul(z, z)))
        + base.stmts[2:],
    )
    verify_program(prog)
    assert find_rereads(lift(prog), H200.onchip_bytes) == ()


def test_no_reread_when_the_consumer_reads_another_slice() -> None:
    # s[i] = Σ_j x[i, j] but y[i, j] = x[i, j] * s[j]: x[i, j] is not in the slice of s[j]
    R = 1 << 15
    x = Load("x", (i, j))
    prog = Program(
        "mismatch",
        (t("x", (R, R)), t("s", (R,), F32, Role.TEMP), t("y", (R, R), F32, Role.OUTPUT)),
        (
            Stmt(loops(i=R), Store("s", (i,)), Update.ASSIGN, Const(0.0)),
            Stmt(loops(i=R, j=R), Store("s", (i,)), Update.ADD, x),
            Stmt(loops(i=R, j=R), Store("y", (i, j)), Update.ASSIGN, mul(x, Load("s", (j,)))),
        ),
    )
    verify_program(prog)
    assert find_rereads(lift(prog), L4.onchip_bytes) == ()


def test_no_reread_when_the_output_is_overwritten() -> None:
    n = 1 << 30
    prog = _with(normalize(n), Stmt(loops(i=n), Store("y", (i,)), Update.ASSIGN, Const(0.0)))
    assert find_rereads(lift(prog), H200.onchip_bytes) == ()


def test_guarded_reduction_is_not_analysed() -> None:
    # a reduction over part of x (guarded): skipped, never over-charged
    n = 1 << 30
    base = normalize(n)
    half = Stmt(
        loops(i=n),
        Store("s", (ZERO,)),
        Update.ADD,
        mul(Load("x", (i,)), Load("x", (i,))),
        guards=(ge(i, n // 2),),
    )
    prog = Program("half", base.tensors, (base.stmts[0], half) + base.stmts[2:])
    assert find_rereads(lift(prog), H200.onchip_bytes) == ()


# ---- capacity-forced traffic of a contraction ----------------------------------------------------


def gemm(m: int, n: int, kk: int, a_dtype: DType, c_dtype: DType, same: bool = False) -> Program:
    b_name = "A" if same else "B"
    b_index = (j, k) if same else (k, j)
    tensors = (
        (t("A", (m, kk), a_dtype),)
        if same
        else (t("A", (m, kk), a_dtype), t("B", (kk, n), a_dtype, Role.PARAM))
    )
    return Program(
        "gemm",
        tensors + (t("C", (m, n), c_dtype, Role.OUTPUT),),
        (
            Stmt(loops(i=m, j=n), Store("C", (i, j)), Update.ASSIGN, Const(0)),
            Stmt(
                loops(i=m, j=n, k=kk),
                Store("C", (i, j)),
                Update.ADD,
                mul(Load("A", (i, k)), Load(b_name, b_index)),
            ),
        ),
    )


def test_int8_gemm_on_l4_is_capacity_bound() -> None:
    M = N = K = 1 << 15
    prog = gemm(M, N, K, I8, I32)
    verify_program(prog)
    S_words = 50331648 + 58 * (131072 + 262144 + 32768)  # L4 on-chip bytes = int8 words
    assert L4.onchip_bytes == S_words
    # Smith et al.: Q >= 2MNK/sqrt(S) - 2S words, less M*N initial and M*N final C transfers
    q = math.ceil(2 * M * N * K / math.sqrt(S_words))
    assert q == ceil_sqrt(-(-((2 * M * N * K) ** 2) // S_words))  # the exact integer ceiling
    io_words = q - 2 * S_words - 2 * M * N
    assert smith_words(M, N, K, S_words) - 2 * M * N == io_words
    compulsory = M * K + K * N + 4 * M * N
    cache_aware = io_words * 1 + 4 * M * N  # int8 words are bytes; C's int32 writes on top
    a = analyze(prog, L4, NW)
    tr = a.traffic
    (io,) = tr.contractions
    assert (io.batch, io.m, io.n, io.k, io.word_bits, io.onchip_words) == (1, M, N, K, 8, S_words)
    assert tr.compulsory_bytes == compulsory
    assert tr.cache_aware_bytes == cache_aware
    assert tr.capacity_forced_bytes == cache_aware - compulsory > 0
    assert a.cache_aware.memory_seconds == cache_aware / L4.dram_bytes_per_s


def test_small_gemm_capacity_term_is_zero() -> None:
    a = analyze(gemm(1024, 1024, 1024, I8, I32), L4, NW)
    assert a.traffic.contractions[0].bytes == 0
    assert a.traffic.capacity_forced_bytes == 0
    assert a.cache_aware.seconds == a.fused.seconds


def test_capacity_bound_needs_distinct_operands() -> None:
    a = analyze(gemm(1 << 15, 1 << 15, 1 << 15, I8, I32, same=True), L4, NW)  # A @ A.T
    assert a.traffic.contractions == ()


def test_batched_gemm_counts_each_batch_element() -> None:
    B, M = 3, 1 << 14
    b = var("b")
    prog = Program(
        "bmm",
        (t("A", (B, M, M), I8), t("B", (B, M, M), I8), t("C", (B, M, M), I32, Role.OUTPUT)),
        (
            Stmt(loops(b=B, i=M, j=M), Store("C", (b, i, j)), Update.ASSIGN, Const(0)),
            Stmt(
                loops(b=B, i=M, j=M, k=M),
                Store("C", (b, i, j)),
                Update.ADD,
                mul(Load("A", (b, i, k)), Load("B", (b, k, j))),
            ),
        ),
    )
    verify_program(prog)
    (io,) = analyze(prog, L4, NW).traffic.contractions
    assert (io.batch, io.m, io.n, io.k) == (B, M, M, M)
    per_batch = max(0, smith_words(M, M, M, io.onchip_words) - 2 * M * M)
    assert io.bytes == B * per_batch


# ---- warm cache ---------------------------------------------------------------------------------


def test_warm_cache_frees_up_to_l2_of_inputs() -> None:
    L = H200.l2_bytes
    small = normalize(1 << 20)  # 4 MiB input fits in L2: only the output is written
    warm = analyze(small, H200, Assumptions(writeback=False, cache="warm"))
    assert warm.traffic.compulsory_bytes == 4 * (1 << 20)
    assert warm.totals.dram_bytes == 4 * (1 << 20)
    n = 1 << 30
    big_cold = analyze(normalize(n), H200, NW)
    big_warm = analyze(normalize(n), H200, Assumptions(writeback=False, cache="warm"))
    assert big_warm.traffic.compulsory_bytes == big_cold.traffic.compulsory_bytes - L
    # re-reads after the reduction do not depend on what L2 held at the start
    assert big_warm.traffic.dependency_forced_bytes == big_cold.traffic.dependency_forced_bytes
    assert big_warm.cache_aware.seconds < big_cold.cache_aware.seconds
    # eager: every kernel may find up to L of an input in L2
    assert big_cold.ops[1].dram_bytes == 4 * n  # s += x*x: the first kernel reading x
    assert big_warm.ops[1].dram_bytes == 4 * n - L
    assert "warm" in "\n".join(Assumptions(writeback=False, cache="warm").describe())


def test_levels_are_ordered_across_cases() -> None:
    cases = [
        normalize(1 << 26),
        batch_norm(8, 3, 512, 512),
        softmax(64, 1 << 20),
        gemm(4096, 4096, 4096, I8, I32),
    ]
    for prog in cases:
        for spec in (L4, H200, get_spec("B200")):
            for cache in ("cold", "warm"):
                a = analyze(prog, spec, Assumptions(writeback=False, cache=cache))
                assert a.unfused.seconds >= a.cache_aware.seconds >= a.fused.seconds
                assert a.traffic.cache_aware_bytes >= a.traffic.compulsory_bytes
                assert a.totals.unfused_dram_bytes >= a.totals.cache_aware_dram_bytes
