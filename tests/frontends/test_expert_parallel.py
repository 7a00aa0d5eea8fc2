"""Expert, sequence and pipeline sharding of hf: steps: per-rank contraction FLOPs x ranks against the
unsharded step's (exact integers), the all-to-all buffers of the least-traffic routing, sequence
parallelism's reduce-scatter + all-gather in place of each all-reduce (exact bytes), pipeline stages
that keep the dense layers of DeepSeek configs, and the combinations refused in one line."""

from __future__ import annotations

import functools
import json

import pytest

from solar.backends.bounds import analyze
from solar.errors import UsageError
from solar.frontends.torch.ep import exchanged_rows, leaving_rows
from solar.frontends.torch.hf import scenario
from solar.frontends.torch.pp import dense_layers, layer_kinds, load_hf_stages
from solar.frontends.torch.tp import load_hf_tp
from solar.hardware import get_spec
from solar.ir.collectives import Kind, full_bytes, sharded_of, verify_sharded

MIXTRAL = "hf:tests/fixtures/hf/mixtral-tiny.json"  # hidden 64, 4 experts, top-2, 2 layers, vocab 128
DEEPSEEK = "hf:tests/fixtures/hf/deepseek-v3-tiny.json"  # 8 experts, top-2, first layer dense, MLA
PREFILL = scenario("prefill", 4, 6, None)  # 24 tokens
TOKENS, HIDDEN = 24, 64


@functools.cache
def _flops(spec: str, tp: int = 1, dp: int = 1, ep: int = 1, sp: bool = False) -> tuple[int, object]:
    loaded = load_hf_tp(spec, PREFILL, tp, dp, ep, sp)
    sharded = sharded_of(loaded.program, tp * dp)
    verify_sharded(sharded)
    return analyze(sharded.program, get_spec("H100-SXM")).totals.contraction_flops, sharded


@pytest.mark.parametrize("experts,k,ep,tokens,leave,rows", [
    (4, 2, 4, 6, 6, 8),      # one expert per rank: 1 of 2 rows leaves; 3 chunks of 2 rows
    (4, 2, 2, 12, 0, 0),     # two experts per rank hold both of a token's choices
    (256, 8, 64, 7, 28, 0),  # 4 local of 8: 4 leave; 28 rows over 63 peers: under one row each
    (8, 2, 8, 7, 7, 8),      # Mixtral 8x7B at EP 8: 7 rows leave, one to each of 7 peers
])
def test_least_traffic_rows(experts, k, ep, tokens, leave, rows):
    assert leaving_rows(tokens, k, experts, ep) == leave
    assert exchanged_rows(tokens, k, experts, ep) == rows
    assert rows // ep * (ep - 1) <= leave  # what the all-to-all sends never exceeds the least traffic


# router: 2 layers x 2 flops x 24 tokens x hidden 64 x 4 experts, computed by every tensor-parallel rank
MIXTRAL_ROUTER = 2 * 2 * TOKENS * HIDDEN * 4


@pytest.mark.parametrize("tp,dp,ep,a2a,gathers", [
    (2, 2, 4, 4, 2),  # 6 own tokens per rank, 6 rows leave: all-to-all buffers of 8 rows
    (1, 2, 2, 0, 0),  # 2 experts per rank: the least-traffic routing keeps every row local
    (2, 1, 1, 0, 2),  # every expert on every rank: each tensor-parallel rank routes half the tokens
])
def test_mixtral_ep_flops_are_the_unsharded_plus_the_replicated_router(tp, dp, ep, a2a, gathers):
    whole, _ = _flops(MIXTRAL)
    part, sharded = _flops(MIXTRAL, tp, dp, ep)
    assert part * tp * dp == whole + (tp - 1) * MIXTRAL_ROUTER
    kinds = [c.kind for c in sharded.collectives]
    assert kinds.count(Kind.ALL_TO_ALL) == a2a and kinds.count(Kind.ALL_GATHER) == gathers + (tp > 1)
    for c in sharded.collectives:
        if c.kind is Kind.ALL_TO_ALL:  # 8 rows of 64 bf16: 1024 bytes; 3/4 of it leaves = the 6 rows
            assert (c.groups, full_bytes(c, sharded.program)) == (((0, 1, 2, 3),), 8 * HIDDEN * 2)
            assert full_bytes(c, sharded.program) * 3 // 4 == 6 * HIDDEN * 2


def test_deepseek_tp_ep_flops_exact():
    whole, _ = _flops(DEEPSEEK)
    part, sharded = _flops(DEEPSEEK, 2, 1, 2)
    router = 2 * TOKENS * HIDDEN * 8  # one MoE layer (the first is dense)
    down = 2 * (2 * TOKENS * HIDDEN * 48 + 2 * TOKENS * HIDDEN * (32 + 8))  # q_a, kv_a of 2 layers (MLA)
    assert part * 2 == whole + router + down == 4010496 + 565248
    assert [c.kind for c in sharded.collectives].count(Kind.ALL_TO_ALL) == 0  # 4 of 8 experts local


LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
    "num_attention_heads": 8, "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 1024,
    "torch_dtype": "bfloat16", "max_position_embeddings": 512, "tie_word_embeddings": False,
}


def test_sequence_parallelism_replaces_each_all_reduce(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA))
    spec = f"hf:{config}"
    plain, tp_only = _flops(spec, 2)
    sp_flops, sp = _flops(spec, 2, sp=True)
    assert sp_flops == plain
    kinds = [c.kind for c in sp.collectives]
    assert kinds == [Kind.ALL_GATHER, Kind.REDUCE_SCATTER] * 4 + [Kind.ALL_GATHER, Kind.ALL_GATHER]
    s = 4 * 6 * 256 * 2  # the [4, 6, 256] bf16 hidden states: 12288 bytes
    reduce = [full_bytes(c, tp_only.program) for c in tp_only.collectives if c.kind is Kind.ALL_REDUCE]
    assert reduce == [s] * 4
    assert [full_bytes(c, sp.program) for c in sp.collectives][:-1] == [s] * 9
    assert sp.program.shape(sp.collectives[1].out) == (4, 3, 256)  # the residual stream: half the sequence
    assert sp.program.shape(sp.collectives[0].arg) == (4, 3, 256)  # a norm's output, gathered


def test_pipeline_stages_keep_deepseeks_dense_first_layer():
    config = type("C", (), {"num_hidden_layers": 4, "first_k_dense_replace": 1})()
    assert dense_layers(config, 4) == {0}
    assert [dense for _, dense in layer_kinds(config)] == [True, False, False, False]
    qwen = type("C", (), {"num_hidden_layers": 4, "mlp_only_layers": [0], "decoder_sparse_step": 2})()
    assert dense_layers(qwen, 4) == {0, 2}
    whole, _ = _flops(DEEPSEEK)
    spec = get_spec("H100-SXM")
    stages = load_hf_stages(DEEPSEEK, PREFILL, 1, 2)
    flops = [analyze(s.loaded.program, spec).totals.contraction_flops for s in stages]
    assert sum(flops) == whole
    grouped = [sum("grouped_mm" in (x.origin.op if x.origin else "") for x in s.loaded.program.stmts) for s in stages]
    assert grouped[0] == 0 and grouped[1] > 0


BAD = [
    (MIXTRAL, 1, 3, 3, False, r"--ep 3 must divide the 4 routed experts"),
    ("hf:tests/fixtures/hf/llama2-7b.json", 1, 2, 2, False, r"--ep applies to mixture-of-experts models"),
    (MIXTRAL, 2, 1, 1, True, r"--sp with mixture-of-experts layers is not supported"),
    ("hf:tests/fixtures/hf/olmoe-tiny.json", 2, 1, 1, False, r"q_norm normalises across all heads; use --tp 1"),
    (MIXTRAL, 2, 1, 4, False, r"--ep 4 must divide the tp x dp = 2 ranks"),
    (MIXTRAL, 1, 1, 1, True, r"--sp splits the sequence over the tensor-parallel ranks"),
]


@pytest.mark.parametrize("spec,tp,dp,ep,sp,message", BAD)
def test_refused_combinations(spec, tp, dp, ep, sp, message):
    step = scenario("prefill", 6, 6, None)
    with pytest.raises(UsageError, match=message):
        load_hf_tp(spec, step, tp, dp, ep, sp)
