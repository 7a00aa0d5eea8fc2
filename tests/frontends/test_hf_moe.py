"""Every MoE family of transformers through its own default dispatch (`hf:` steps of the tiny
configs in tests/fixtures/hf/*-tiny.json, random weights): each analyses at prefill and decode, and
its contraction FLOPs equal FlopCounterMode's count of the same step run for real, with the two
parts FlopCounterMode cannot price counted by hand: the experts' grouped GEMM (no rule for
aten._grouped_mm) and the causal pairs of prefill attention (it counts every pair)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import solar.frontends.torch  # noqa: F401  (before transformers: see frontends/torch/libraries.py)

pytest.importorskip("transformers")

from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from solar.api import analyze_loaded, load_hf
from solar.frontends.torch.hf import Scenario, build

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf"
STEPS = (Scenario("prefill", 1, 8, 0), Scenario("decode", 1, 1, 8))


@dataclass(frozen=True)
class Family:
    """A tiny config and the facts the hand count needs: the layers with routed experts, each
    expert's intermediate size, the query-key and value head dims, and whether solar discounts
    the masked pairs of causal prefill (a band mask; GPT-OSS's eager attention with sinks adds a
    finite mask and is counted dense: sound, not tight), and how many experts' weights a layer is
    priced at (None: k, top-k routing found; 1 where the routing is not a top-k)."""

    fixture: str
    moe_layers: int
    expert_intermediate: int
    qk_dim: int
    v_dim: int
    causal_discount: bool = True
    experts_read: int | None = None


FAMILIES = (
    Family("mixtral-tiny.json", 2, 96, 16, 16),
    Family("qwen2-moe-tiny.json", 2, 48, 16, 16),  # + a shared expert behind a sigmoid gate
    Family("qwen3-moe-tiny.json", 2, 48, 16, 16),
    Family("olmoe-tiny.json", 2, 48, 16, 16),
    Family("deepseek-v3-tiny.json", 1, 32, 24, 16),  # layer 0 dense; MLA; a shared expert
    Family("gpt-oss-tiny.json", 2, 64, 16, 16, causal_discount=False),
    # sparsemixer routing: two masked argmaxes, not a top-k, so no distinct-experts claim
    Family("phimoe-tiny.json", 2, 96, 16, 16, experts_read=1),
    Family("granitemoe-tiny.json", 2, 96, 16, 16),
)


def flop_counts(spec: str, step: Scenario) -> dict[str, int]:
    """FlopCounterMode's counts per op for the step run for real on random weights and cache,
    attention through SDPA's math form (matmuls it prices)."""
    built = build(spec, step)
    torch.manual_seed(0)
    model = built.module.requires_grad_(False)
    for p in model.parameters():
        p.data = torch.randn(p.shape, dtype=p.dtype) * 0.05
    ids = torch.randint(0, built.config.vocab_size, built.inputs[0].shape)
    kv = tuple(torch.randn(t.shape, dtype=t.dtype) for t in built.inputs[1:])
    with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
        model(ids, *kv)
    return {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.kind)
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.fixture.removesuffix("-tiny.json"))
def test_family_step_counts(family: Family, step: Scenario):
    spec = str(FIXTURES / family.fixture)
    c = json.loads((FIXTURES / family.fixture).read_text())
    loaded = load_hf(f"hf:{spec}", step)
    report = analyze_loaded(loaded, "H100-SXM")
    tokens, k, hidden = step.batch * step.seq, c["num_experts_per_tok"], c["hidden_size"]
    # the experts: T·k rows through gate/up (2I x H) and down (H x I), whatever the routing
    experts = 2 * tokens * k * 3 * hidden * family.expert_intermediate * family.moe_layers
    # attention: QKᵀ and P·V over the pairs of each head (all of them in FlopCounterMode)
    rows, heads = step.cache_rows, c["num_attention_heads"]
    per_pair = 2 * step.batch * heads * (family.qk_dim + family.v_dim) * c["num_hidden_layers"]
    dense = per_pair * step.seq * rows
    causal = step.kind == "prefill" and family.causal_discount
    kept = per_pair * step.seq * (step.seq + 1) // 2 if causal else dense
    counts = flop_counts(spec, step)
    assert counts.pop("aten.bmm") == dense
    assert set(counts) <= {"aten.mm", "aten.addmm"}  # linears: exact in FlopCounterMode
    assert report.totals.contraction_flops == sum(counts.values()) + kept + experts
    # the expert weights are read at k experts a layer: the fewest top-k routing touches
    read = k if family.experts_read is None else family.experts_read
    for t in loaded.program.tensors:
        if t.name.endswith(("experts_gate_up_proj", "experts_down_proj")):
            elements = loaded.graph.footprints.elements(t.name, "read")
            assert elements * t.shape[0] == read * loaded.program.numel(t.name), t.name
    cache = loaded.serving.built.inputs[1:]
    assert report.serving.kv_cache_bytes == sum(x.numel() * x.element_size() for x in cache)


def test_latent_cache_of_mla():
    """DeepSeek-V3's attention caches its compressed latent (kv_lora_rank) and the rotary key
    (qk_rope_head_dim), one head each: the cache inputs take the shapes the model writes."""
    c = json.loads((FIXTURES / "deepseek-v3-tiny.json").read_text())
    built = build(str(FIXTURES / "deepseek-v3-tiny.json"), Scenario("decode", 2, 1, 5))
    shapes = {tuple(t.shape) for t in built.inputs[1:]}
    assert shapes == {(2, 1, 6, c["kv_lora_rank"]), (2, 1, 6, c["qk_rope_head_dim"])}
    assert built.kv_cache_bytes == 2 * 2 * 6 * (c["kv_lora_rank"] + c["qk_rope_head_dim"]) * 2
