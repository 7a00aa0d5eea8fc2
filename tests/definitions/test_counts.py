"""Every definition in benchmarks/definitions bounded through its generated problem file, checked
against hand counts (exact integers): FLOPs (a multiply-add is 2), contraction FLOPs and compulsory
DRAM bytes of one workload each."""

from __future__ import annotations

from pathlib import Path

import pytest

import solar
from benchmarks.rows import RESULTS, read_rows
from solar.definitions.suite import cases, find_definitions, write_problems

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "definitions"


def _gqa_paged(a):
    b, hq, d, page, hkv = a["batch_size"], a["num_qo_heads"], a["head_dim"], a["page_size"], a["num_kv_heads"]
    # q and out (bf16), the int32 block table, and the gathered K and V pages: an indirect read is
    # counted at the smallest footprint any index data gives (every entry naming one page)
    return {"contraction_flops": 2 * 2 * b * hq * a["seq_len"] * d,
            "dram_bytes": 2 * b * hq * d * 2 + b * a["num_pages"] * 4 + 2 * page * hkv * d * 2}


#: definition -> (the var axes of the workload checked, {total: hand count from the axes})
HAND = {
    "gemm_n4096_k4096": ({"M": 16}, lambda a: {
        "flops": 2 * a["M"] * a["N"] * a["K"], "contraction_flops": 2 * a["M"] * a["N"] * a["K"],
        "dram_bytes": (a["M"] * a["K"] + a["N"] * a["K"] + a["M"] * a["N"]) * 2}),
    "rmsnorm_h4096": ({"batch_size": 64}, lambda a: {
        # per element: square, sum, times rstd, times weight; per row: mean, + eps, rsqrt
        "flops": 4 * a["batch_size"] * a["hidden_size"] + 3 * a["batch_size"],
        "contraction_flops": 0,
        "dram_bytes": 2 * a["batch_size"] * a["hidden_size"] * 2 + a["hidden_size"] * 2}),
    "fused_add_rmsnorm_h2048": ({"batch_size": 8}, lambda a: {
        "flops": 5 * a["batch_size"] * a["hidden_size"] + 3 * a["batch_size"],
        "dram_bytes": 4 * a["batch_size"] * a["hidden_size"] * 2 + a["hidden_size"] * 2}),
    "rope_h32_d128": ({"num_tokens": 256}, lambda a: {
        "flops": 3 * a["num_tokens"] * a["num_heads"] * a["head_dim"],  # two products and a sum
        "dram_bytes": 2 * a["num_tokens"] * a["num_heads"] * a["head_dim"] * 2
        + 2 * a["num_tokens"] * a["half_dim"] * 4}),
    "swiglu_h2048_i8192": ({"T": 64}, lambda a: {
        "contraction_flops": 2 * a["T"] * a["I2"] * a["H"],
        "flops": 2 * a["T"] * a["I2"] * a["H"] + 3 * a["T"] * a["I"],  # sigmoid, two products
        "dram_bytes": (a["T"] * a["H"] + a["I2"] * a["H"] + a["T"] * a["I"]) * 2}),
    "gqa_paged_decode_h32_kv8_d128_ps16": ({"batch_size": 16, "num_pages": 128, "total_pages": 2048}, _gqa_paged),
    "linear_backward_fp32": ({"M": 64, "N": 64, "K": 128}, lambda a: {
        "flops": 2 * 2 * a["M"] * a["N"] * a["K"],
        "dram_bytes": (a["M"] * a["N"] + 2 * a["M"] * a["K"] + 2 * a["N"] * a["K"]) * 4}),
    "gemm_fp8_n7168_k2048": ({"M": 16}, lambda a: {
        "contraction_flops": 2 * a["M"] * a["N"] * a["K"],
        "flops": 2 * a["M"] * a["N"] * a["K"] + 2 * a["M"] * a["N"],  # two scale products per output
        "dram_bytes": a["M"] * a["K"] + a["N"] * a["K"] + 2 * 4 + a["M"] * a["N"] * 2}),
    "moe_routing_e64_k8": ({"T": 16}, lambda a: {
        "contraction_flops": 0,
        "dram_bytes": a["T"] * a["E"] * 4 + a["T"] * a["K"] * 8 + a["T"] * a["K"] * 4}),
    "conv2d_c256_k3_p1": ({"N": 1, "H": 14, "W": 14}, lambda a: {
        # padding 1: a 3-tap window touches real input at 3H - 2 output rows (and 3W - 2 columns)
        "contraction_flops": 2 * a["N"] * a["O"] * a["C"] * (3 * a["H"] - 2) * (3 * a["W"] - 2),
        "dram_bytes": (2 * a["N"] * a["C"] * a["H"] * a["W"] + a["O"] * a["C"] * 9) * 2}),
    "gqa_causal_prefill_h16_kv4_d64": ({"S": 128}, lambda a: {
        # causal: S(S+1)/2 scores per head, for Q.K and for P.V
        "contraction_flops": 2 * 2 * a["H_qo"] * a["D"] * a["S"] * (a["S"] + 1) // 2,
        "dram_bytes": (2 * a["H_qo"] + 2 * a["H_kv"]) * a["S"] * a["D"] * 2}),
}


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    out = tmp_path_factory.mktemp("defs")
    all_cases = cases(find_definitions(ROOT))
    paths = {c.rel: p.path for c, p in zip(all_cases, write_problems(all_cases, out))}
    return {(c.definition.name, tuple(sorted(c.workload.axes))): (c, paths[c.rel]) for c in all_cases}


def test_every_definition_has_a_hand_count_and_at_least_ten_exist():
    names = {e.definition.name for e in find_definitions(ROOT)}
    assert names == set(HAND) and len(names) >= 10


@pytest.mark.parametrize("name", sorted(HAND))
def test_bound_equals_the_hand_count(name, problems):
    var, hand = HAND[name]
    case, path = problems[(name, tuple(sorted(var.items())))]
    report = solar.analyze(str(path), arch="B200", clock_mhz=1500, writeback=False)  # outputs in DRAM
    expected = hand(case.axes)
    got = {k: int(getattr(report.totals, k)) for k in expected}
    assert got == expected
    fused = report.bounds["fused"]
    assert fused.seconds >= max(fused.compute_seconds, fused.memory_seconds)


MEASURED = RESULTS / "definitions_measured.jsonl"


@pytest.mark.parametrize("name", sorted(HAND))
def test_no_bound_beats_the_h200_times(name, problems):
    """The committed H200 times (benchmarks/definitions_validate.py: the reference eager and under
    torch.compile, L2 flushed) are an oracle: today's bound of the checked workload, at every level,
    stays at or below the fastest run of each mode that level claims."""
    from solar.backends.levels import claims

    var, _ = HAND[name]
    case, path = problems[(name, tuple(sorted(var.items())))]
    measured = next(r for r in read_rows(MEASURED) if r["definition"] == name and r["workload"] == case.workload.uuid)
    report = solar.analyze(str(path), arch="H200-SXM")
    checked = 0
    for level, bound in report.bounds.items():
        for mode in measured["min_seconds"]:
            if claims(level, mode):
                assert bound.seconds <= measured["min_seconds"][mode], (level, mode)
                checked += 1
    assert checked >= 6
