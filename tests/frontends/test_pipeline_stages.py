"""Pipeline stages of an hf: step: consecutive decoder layers per stage, the embedding on the first
and the head on the last; the stages' contraction FLOPs x micro-batches add up to the whole step's,
and a stage sends exactly one micro-batch's hidden states."""

from __future__ import annotations

import json

import pytest

from solar.backends.bounds import analyze
from solar.frontends.torch.hf import SHARDING, build, scenario
from solar.frontends.torch.pp import PipelineStage, load_hf_stages
from solar.frontends.torch.tp import TensorParallel, load_hf_tp
from solar.hardware import get_spec
from solar.ir.collectives import Kind, sharded_of
from solar.ir.nodes import Role

TINY_LLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
    "num_attention_heads": 8, "num_key_value_heads": 4, "num_hidden_layers": 6, "vocab_size": 1024,
    "torch_dtype": "bfloat16", "max_position_embeddings": 512, "tie_word_embeddings": False,
}


@pytest.mark.parametrize("pp,tp,m,layers", [(2, 1, 1, (3, 3)), (3, 2, 2, (2, 2, 2)), (4, 1, 2, (2, 2, 1, 1))])
def test_stages_add_up_to_the_whole_step(tmp_path, pp, tp, m, layers):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_LLAMA))
    step = scenario("prefill", 4, 16, None)
    spec = get_spec("H100-SXM")
    whole = analyze(load_hf_tp(f"hf:{config}", step, 1).program, spec).totals.contraction_flops
    stages = load_hf_stages(f"hf:{config}", step, tp, pp, 1, m)
    assert tuple(s.layers for s in stages) == layers
    flops = sum(analyze(s.loaded.program, spec).totals.contraction_flops for s in stages)
    assert flops * tp * m == whole  # 8 heads, 4 key/value heads: nothing replicated at tp <= 4
    micro = 4 // m
    for s in stages:
        sharded = sharded_of(s.loaded.program, tp)
        kinds = [c.kind for c in sharded.collectives]
        head = [Kind.ALL_GATHER] if s.index == pp - 1 and tp > 1 else []
        assert kinds == [Kind.ALL_REDUCE] * (2 * s.layers if tp > 1 else 0) + head
        result = s.loaded.program.with_role(Role.OUTPUT)[-1].name
        if s.index == pp - 1:  # the logits (all-gathered over the vocabulary)
            assert s.loaded.program.numel(result) == micro * 16 * 1024
        else:  # the hidden states sent on
            assert s.loaded.program.shape(result) == (micro, 16, 256)


@pytest.mark.parametrize("first,layers,want", [(0, 1, ["sliding_attention"]), (1, 1, ["full_attention"]),
                                               (0, 2, ["sliding_attention", "full_attention"])])
def test_a_stage_builds_its_own_layer_kinds(first, layers, want):
    spec = "tests/fixtures/hf/gpt-oss-tiny.json"
    stage = PipelineStage(TensorParallel(spec, 1), first == 0, first + layers == 2, (first, layers), (1, 1))
    token = SHARDING.set(stage)
    try:
        built = build(spec, scenario("decode", 1, None, 16))
    finally:
        SHARDING.reset(token)
    assert (built.layers, list(built.config.layer_types)) == (layers, want)
