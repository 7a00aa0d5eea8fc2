"""Work, compute time, DRAM bytes and the fused/unfused bounds, on hand-built IR programs."""

from __future__ import annotations

import itertools

import pytest

from solar.backends import Assumptions, Work, analyze, analyze_graph, compute_time
from solar.backends.memory import fused_dram_bytes, op_groups, unfused_dram_bytes
from solar.backends.work import graph_work, total
from solar.errors import UsageError
from solar.hardware import get_spec
from solar.ir.affine import ge, lt, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Call, Const, Load, Loop, Origin, Program, Role, Stmt, Store, TensorDecl
from solar.ir.scalar_ops import CostClass, ScalarOp, Update
from solar.lift import lift

F32, BF16 = DType.F32, DType.BF16
H100 = get_spec("H100-SXM")
A100 = get_spec("A100-SXM4-80GB")
i, j, k = var("i"), var("j"), var("k")

NW = Assumptions(writeback=False)  # byte rules with every output byte in DRAM at the end (write-back: test_library.py)


def t(name: str, shape: tuple, dtype: DType = F32, role: Role = Role.INPUT) -> TensorDecl:
    return TensorDecl(name, shape, dtype, role)


def loops(**extents: int) -> tuple[Loop, ...]:
    return tuple(Loop(v, n) for v, n in extents.items())


def call(op: ScalarOp, *args) -> Call:
    return Call(op, args)


def matmul(m: int, n: int, kk: int, dtype: DType = F32, tf32: bool = False) -> Program:
    o = Origin("aten.mm.default", 0, "model.py:3", allow_tf32=tf32)
    return Program(
        "mm",
        (
            t("A", (m, kk), dtype),
            t("B", (kk, n), dtype, Role.PARAM),
            t("C", (m, n), dtype, Role.OUTPUT),
        ),
        (
            Stmt(loops(i=m, j=n), Store("C", (i, j)), Update.ASSIGN, Const(0.0), origin=o),
            Stmt(
                loops(i=m, j=n, k=kk),
                Store("C", (i, j)),
                Update.ADD,
                call(ScalarOp.MUL, Load("A", (i, k)), Load("B", (k, j))),
                origin=o,
            ),
        ),
    )


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


# ---- work and bytes: exact integers --------------------------------------------------------------


def test_matmul_counts() -> None:
    M, N, K = 64, 48, 32
    a = analyze(matmul(M, N, K), H100, NW)
    assert a.totals.flops == 2 * M * N * K  # the init statement C = 0 counts nothing
    assert a.totals.contraction_flops == 2 * M * N * K
    assert a.totals.dram_bytes == 4 * (M * K + K * N + M * N)
    assert len(a.ops) == 1 and a.ops[0].node_ids == (0, 1) and a.ops[0].op == "aten.mm.default"


def test_bf16_bytes_are_two_per_element() -> None:
    M, N, K = 64, 48, 32
    a = analyze(matmul(M, N, K, BF16), H100, NW)
    assert a.totals.dram_bytes == 2 * (M * K + K * N + M * N)
    (work,) = [w for w in graph_work(lift(matmul(M, N, K, BF16))).values() if w.macs]
    assert work.macs == (((BF16, False), M * N * K),)


def test_causal_scores_count_the_triangle() -> None:
    S, D = 96, 16
    q, kk, d = var("q"), var("kk"), var("d")
    prog = Program(
        "causal",
        (t("Q", (S, D)), t("K", (S, D)), t("P", (S, S), F32, Role.OUTPUT)),
        (
            Stmt(loops(q=S, kk=S), Store("P", (q, kk)), Update.ASSIGN, Const(0.0)),
            Stmt(
                loops(q=S, kk=S, d=D),
                Store("P", (q, kk)),
                Update.ADD,
                call(ScalarOp.MUL, Load("Q", (q, d)), Load("K", (kk, d))),
                guards=(ge(q, kk),),
            ),
        ),
    )
    work = total(graph_work(lift(prog)).values())
    assert work.mac_count == S * (S + 1) // 2 * D
    assert work.flops == 2 * S * (S + 1) // 2 * D


def grouped_conv(n=2, c=4, h=7, w=7, g=2, cout=6, r=3, stride=2, pad=1) -> tuple[Program, int, int]:
    """Grouped, strided, padded 2-D convolution with guards; returns (program, MACs, input elements
    touched) with the expected counts brute-forced by loops."""
    oh = (h + 2 * pad - r) // stride + 1
    ow = (w + 2 * pad - r) // stride + 1
    cg, og = c // g, cout // g
    v = {name: var(name) for name in ("n", "g", "oc", "p", "q", "ic", "kh", "kw")}
    hi = stride * v["p"] + v["kh"] - pad
    wi = stride * v["q"] + v["kw"] - pad
    x = Load("x", (v["n"], cg * v["g"] + v["ic"], hi, wi))
    wt = Load("wt", (og * v["g"] + v["oc"], v["ic"], v["kh"], v["kw"]))
    out = Store("y", (v["n"], og * v["g"] + v["oc"], v["p"], v["q"]))
    prog = Program(
        "gconv",
        (
            t("x", (n, c, h, w)),
            t("wt", (cout, cg, r, r), F32, Role.PARAM),
            t("y", (n, cout, oh, ow), F32, Role.OUTPUT),
        ),
        (
            Stmt(loops(n=n, g=g, oc=og, p=oh, q=ow), out, Update.ASSIGN, Const(0.0)),
            Stmt(
                loops(n=n, g=g, oc=og, p=oh, q=ow, ic=cg, kh=r, kw=r),
                out,
                Update.ADD,
                call(ScalarOp.MUL, x, wt),
                guards=(ge(hi, 0), lt(hi, h), ge(wi, 0), lt(wi, w)),
            ),
        ),
    )
    macs = 0
    touched = set()
    for nn, gg, oc, p, qq, ic, kh, kw in itertools.product(
        range(n), range(g), range(og), range(oh), range(ow), range(cg), range(r), range(r)
    ):
        hh, ww = stride * p + kh - pad, stride * qq + kw - pad
        if 0 <= hh < h and 0 <= ww < w:
            macs += 1
            touched.add((nn, gg * cg + ic, hh, ww))
    return prog, macs, len(touched)


def test_grouped_strided_padded_conv_counts_only_real_macs() -> None:
    prog, macs, x_elems = grouped_conv()
    (node,) = [nd for nd in lift(prog).nodes() if nd.is_contraction]
    work = total(graph_work(lift(prog)).values())
    assert work.mac_count == macs
    assert macs < 2 * 6 * 4 * 4 * 2 * 9  # padding removed some points
    wt_elems, y_elems = 6 * 2 * 9, 2 * 6 * 4 * 4
    assert fused_dram_bytes(lift(prog)) == 4 * (x_elems + wt_elems + y_elems)


# ---- compute time --------------------------------------------------------------------------------


def test_fp32_matmul_without_tf32_runs_on_simt() -> None:
    M, N, K = 512, 512, 512
    a = analyze(matmul(M, N, K), H100, Assumptions(writeback=False, precision="exact"))
    assert rel(a.fused.compute_seconds, 2 * M * N * K / H100.simt_rate("fp32")) < 1e-12
    assert a.fused.binding_unit == "fma"


def test_tf32_flag_and_fastest_policy() -> None:
    macs = 512**3
    work = Work.make({(F32, True): macs})
    # TF32 tensor cores and the FMA pipe share the MACs.
    tc, simt = H100.tensor_rate("tf32") / 2, H100.simt_rate("fp32") / 2
    ct = compute_time(work, H100, Assumptions(precision="exact"))
    assert rel(ct.seconds, macs / (tc + simt)) < 1e-12 and ct.binding_unit == "tensor"
    fastest = compute_time(Work.make({(F32, False): macs}), H100, Assumptions(precision="fastest"))
    best = max(H100.tensor_rate(key) for key in ("tf32", "bf16", "fp16")) / 2
    assert rel(fastest.seconds, macs / (best + simt)) < 1e-12
    assert fastest.seconds < ct.seconds


def test_fp8_on_a100_uses_the_fp16_path() -> None:
    assert A100.tensor_rate("fp8") is None
    macs = 10**9
    ct = compute_time(Work.make({(DType.F8E4M3, False): macs}), A100)
    tc = max(A100.tensor_rate("fp16"), A100.tensor_rate("bf16")) / 2
    assert rel(ct.seconds, macs / (tc + A100.simt_rate("fp32") / 2)) < 1e-12
    # int4 on H100 (no int4 path) uses int8
    ct4 = compute_time(Work.make({(DType.I4, False): macs}), H100)
    assert ct4.by_unit["tensor"] > 0


def test_lp_mixes_units() -> None:
    n_trans, n_fma = 3 * 10**9, 10**9
    trans = Work.make(simt={(CostClass.TRANSCENDENTAL, "fp32"): n_trans})
    fma = Work.make(simt={(CostClass.FMA, "fp32"): n_fma})
    t_trans = compute_time(trans, H100).seconds
    t_fma = compute_time(fma, H100).seconds
    both = compute_time(trans + fma, H100)
    assert max(t_trans, t_fma) <= both.seconds * (1 + 1e-12)
    assert both.seconds <= t_trans + t_fma
    # closed form: the SFU takes transcendentals, the FMA pipe takes the rest.
    F, S = H100.simt_rate("fp32"), H100.sfu_ops_per_s.value
    expect = max((n_trans + n_fma) / (F + S), n_fma / F)
    assert rel(both.seconds, expect) < 1e-9
    assert compute_time(Work(), H100).seconds == 0.0


def test_work_is_additive_and_counts_ops_from_the_table() -> None:
    # y[i] = exp(x[i]) * 2 + x[i], then s += y[i] (sum) and m max= y[i]
    n = 1000
    prog = Program(
        "ew",
        (
            t("x", (n,)),
            t("y", (n,), F32, Role.OUTPUT),
            t("s", (), F32, Role.OUTPUT),
            t("m", (), F32, Role.OUTPUT),
        ),
        (
            Stmt(
                loops(i=n),
                Store("y", (i,)),
                Update.ASSIGN,
                call(
                    ScalarOp.ADD,
                    call(ScalarOp.MUL, call(ScalarOp.EXP, Load("x", (i,))), Const(2.0)),
                    Load("x", (i,)),
                ),
            ),
            Stmt((), Store("s", ()), Update.ASSIGN, Const(0.0)),
            Stmt(loops(i=n), Store("s", ()), Update.ADD, Load("y", (i,))),
            Stmt((), Store("m", ()), Update.ASSIGN, Const(float("-inf"))),
            Stmt(loops(i=n), Store("m", ()), Update.MAX, Load("y", (i,))),
        ),
    )
    works = graph_work(lift(prog))
    w = total(works.values())
    assert dict(w.simt) == {
        (CostClass.FMA, "fp32"): 3 * n,
        (CostClass.TRANSCENDENTAL, "fp32"): n,
        (CostClass.COMPARE, "fp32"): n,
    }
    assert w.flops == 5 * n and w.contraction_flops == 0
    assert works[0] + works[2] == Work.make(
        simt={(CostClass.FMA, "fp32"): 3 * n, (CostClass.TRANSCENDENTAL, "fp32"): n}
    )


def test_clock_scaling_halves_compute_rates_not_dram() -> None:
    prog = matmul(256, 256, 256)
    full = analyze(prog, H100, NW)
    half = analyze(prog, H100, Assumptions(writeback=False, clock_mhz=H100.boost_clock_mhz.value / 2))
    assert rel(half.fused.compute_seconds, 2 * full.fused.compute_seconds) < 1e-12
    assert half.fused.memory_seconds == full.fused.memory_seconds


# ---- bounds --------------------------------------------------------------------------------------


def chain(n: int, dtype: DType = F32) -> Program:
    """x -> t1 = exp(x) -> t2 = t1 * 2 -> y = t2 + 1, one op instance each."""
    x, t1, t2 = (Load(name, (i,)) for name in ("x", "t1", "t2"))

    def op(inst: int, target: str, value) -> Stmt:
        return Stmt(
            loops(i=n), Store(target, (i,)), Update.ASSIGN, value, origin=Origin(f"op{inst}", inst)
        )

    return Program(
        "chain",
        (
            t("x", (n,), dtype),
            t("t1", (n,), dtype, Role.TEMP),
            t("t2", (n,), dtype, Role.TEMP),
            t("y", (n,), dtype, Role.OUTPUT),
        ),
        (
            op(0, "t1", call(ScalarOp.EXP, x)),
            op(1, "t2", call(ScalarOp.MUL, t1, Const(2.0))),
            op(2, "y", call(ScalarOp.ADD, t2, Const(1.0))),
        ),
    )


@pytest.mark.parametrize("n", [1 << 10, 1 << 26])
def test_unfused_at_least_fused_for_a_chain(n: int) -> None:
    a = analyze(chain(n), H100, NW)
    assert a.unfused.seconds >= a.fused.seconds
    assert a.totals.unfused_dram_bytes >= a.totals.dram_bytes
    assert len(a.ops) == 3
    assert a.unfused.launch_seconds == 3 * H100.min_kernel_seconds.value


def test_unfused_l2_rules_for_temporaries() -> None:
    L = H100.l2_bytes
    small, big = 1 << 10, 1 << 26  # 4 KiB and 256 MiB of f32
    assert 4 * big > L
    for n in (small, big):
        prog = chain(n)
        g = lift(prog)
        per_group = unfused_dram_bytes(g, op_groups(g), L, writeback=False)
        spill = max(0.0, 4 * n - L)
        # read x in full + write t1 beyond L2; read t1 + write t2; read t2 + write y in full
        assert per_group == (4 * n + spill, spill + spill, spill + 4 * n)
    # inputs re-read by a later op: full at the first reader, beyond-L2 part after
    n = big
    two = Program(
        "reread",
        (t("x", (n,)), t("y", (n,), F32, Role.OUTPUT), t("z", (n,), F32, Role.OUTPUT)),
        (
            Stmt(
                loops(i=n), Store("y", (i,)), Update.ASSIGN, Load("x", (i,)), origin=Origin("a", 0)
            ),
            Stmt(
                loops(i=n), Store("z", (i,)), Update.ASSIGN, Load("x", (i,)), origin=Origin("b", 1)
            ),
        ),
    )
    g = lift(two)
    assert unfused_dram_bytes(g, op_groups(g), L, writeback=False) == (8 * n, 4 * n - L + 4 * n)


def test_unfused_charges_compulsory_bytes_no_kernel_was_charged() -> None:
    # two ops read disjoint halves of a small input: per-kernel rules charge the second half to
    # nobody, the compulsory traffic still counts.
    n = 1024
    h = n // 2
    prog = Program(
        "halves",
        (t("x", (n,)), t("y", (h,), F32, Role.OUTPUT), t("z", (h,), F32, Role.OUTPUT)),
        (
            Stmt(
                loops(i=h), Store("y", (i,)), Update.ASSIGN, Load("x", (i,)), origin=Origin("a", 0)
            ),
            Stmt(
                loops(i=h),
                Store("z", (i,)),
                Update.ASSIGN,
                Load("x", (i + h,)),
                origin=Origin("b", 1),
            ),
        ),
    )
    a = analyze(prog, H100, NW)
    assert sum(op.dram_bytes for op in a.ops) == 4 * (h + h + h)
    assert a.totals.unfused_dram_bytes == a.totals.dram_bytes == 4 * (n + n)
    assert a.unfused.seconds >= a.fused.seconds


def test_launch_dominates_tiny_programs() -> None:
    a = analyze(chain(4), H100, NW)
    assert a.fused.bottleneck == "launch"
    assert a.fused.seconds == H100.min_kernel_seconds.value
    assert a.unfused.bottleneck == "launch"
    off = analyze(chain(4), H100, Assumptions(writeback=False, count_launch=False))
    assert off.fused.launch_seconds == 0.0 and off.fused.seconds < a.fused.seconds


def test_memory_and_compute_bound_cases() -> None:
    big = analyze(chain(1 << 26), H100, NW)
    assert big.fused.bottleneck == "memory"
    assert big.fused.seconds == 4 * 2 * (1 << 26) / H100.dram_bytes_per_s
    mm = analyze(matmul(2048, 2048, 2048), H100, NW)
    assert mm.fused.bottleneck == "compute" and mm.unfused.bottleneck == "compute"


def test_assumptions() -> None:
    with pytest.raises(UsageError, match="unknown cache state 'hot'; use one of"):
        Assumptions(writeback=False, cache="hot")
    assert "warm" in "\n".join(Assumptions(writeback=False, cache="warm").describe())
    with pytest.raises(UsageError, match="precision"):
        Assumptions(writeback=False, precision="fast")
    a = Assumptions(writeback=False, clock_mhz=1000, tf32_flags=(("torch.backends.cuda.matmul.allow_tf32", False),))
    text = "\n".join(a.describe())
    assert "1000 MHz" in text and "allow_tf32=False" in text and "cold" in text


def test_no_origin_statements_are_their_own_groups() -> None:
    prog = chain(64)
    bare = Program(
        prog.name,
        prog.tensors,
        tuple(Stmt(s.loops, s.target, s.update, s.value) for s in prog.stmts),
    )
    groups = op_groups(lift(bare))
    assert [g.node_ids for g in groups] == [(0,), (1,), (2,)]
    assert analyze(bare, H100, NW).ops[0].op == "<no origin>"


def test_one_graph_priced_on_several_gpus_equals_fresh_analyses() -> None:
    """What a graph keeps from one GPU's analysis (footprints, work, charges) holds for the next:
    pricing one lifted graph on several GPUs and cache states gives what fresh graphs give."""
    programs = [chain(1 << 22), matmul(256, 128, 512, BF16)]
    cases = [(s, Assumptions(cache=c)) for s in (H100, get_spec("L4"), A100) for c in ("cold", "warm")]
    for prog in programs:
        shared = lift(prog)
        for spec, assumptions in cases:
            assert analyze_graph(shared, spec, assumptions) == analyze_graph(lift(prog), spec, assumptions)
