"""The transformers corpus (benchmarks/hf_corpus.py), a fast subset: a dense decoder, an MoE, an
encoder-decoder, an encoder and a state-space model at prefill and decode, analysed through the
Python API, their contraction FLOPs against FlopCounterMode's count of the same step run for real,
the difference counted by hand: the masked pairs of causal prefill (FlopCounterMode counts every
pair), the new token's P·V term at decode (a product over one key: elementwise in solar, not a
contraction), the experts of transformers' grouped GEMM (FlopCounterMode counts its custom op as
0), a pooler whose output is not returned (solar drops it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import solar.frontends.torch  # noqa: F401  (before transformers: see frontends/torch/libraries.py)

pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import solar  # noqa: E402
from benchmarks.hf_corpus import (  # noqa: E402
    BEGIN,
    DOC,
    END,
    FAMILIES,
    PROMPT,
    STEPS_OF,
    build,
    flop_counter,
    load,
    step,
    table,
)

S = PROMPT
LAYERS, HEADS, HEAD_DIM = 2, 4, 16
PAIR = 2 * HEADS * 2 * HEAD_DIM * LAYERS  # QKᵀ and P·V FLOPs of one query-key pair, all layers
CAUSAL = PAIR * (S * S - S * (S + 1) // 2)  # the pairs above the diagonal
ONE_KEY = 2 * LAYERS * HEADS * HEAD_DIM  # the new key's P·V term of a decode step


def experts(tokens: int) -> int:
    """Mixtral's tiny config: T·k rows through gate/up (2I x H) and down (H x I), 2 layers."""
    k, hidden, intermediate = 2, 64, 96
    return 2 * tokens * k * 3 * hidden * intermediate * LAYERS


# (family, step): FlopCounterMode's count minus solar's contraction FLOPs; None: solar at most it
CASES = {
    ("llama", "prefill"): CAUSAL,
    ("llama", "decode"): ONE_KEY,
    ("mixtral", "prefill"): CAUSAL - experts(S),
    ("mixtral", "decode"): ONE_KEY - experts(1),
    ("t5", "prefill"): 0,  # the decoder's causal mask is added to a position bias: dense
    ("t5", "decode"): ONE_KEY,
    ("bert", "prefill"): 2 * 64 * 64,  # the pooler (a 64x64 linear on token 0), not returned
    # 16 image tokens before the 16 of the prompt; the CLIP tower's last MLP on the CLS row (2 x 64
    # x 128 multiply-adds), which the projector drops
    ("llava", "prefill"): PAIR * (4 * S * S - 2 * S * (2 * S + 1) // 2) + 2 * 2 * 64 * 128,
    ("mamba", "prefill"): None,
    ("mamba", "decode"): None,
}
BY_NAME = {f.name: f for f in FAMILIES}


def test_docs_table_is_the_committed_results():
    """docs/MODELS.md holds the script's table of benchmarks/results/hf_corpus.json, and at least
    95 % of the corpus's steps analyse."""
    text = DOC.read_text()
    assert text.split(BEGIN)[1].split(END)[0].strip() == table(load()).strip()
    rows = load()
    wanted = [f"{f.name}/{k}" for f in FAMILIES for k in STEPS_OF[f.kind]]
    assert sum(rows[w]["ok"] for w in wanted) >= 0.95 * len(wanted)


def test_corpus_is_large():
    kinds = {f.kind for f in FAMILIES}
    assert len(FAMILIES) >= 30 and {"causal", "seq2seq", "speech", "encoder", "vlm"} <= kinds
    assert all(set(STEPS_OF[f.kind]) >= {"prefill", "train"} for f in FAMILIES)


@pytest.mark.parametrize("name,kind", CASES, ids=lambda v: str(v))
def test_step_counts_against_flop_counter(name: str, kind: str):
    family = BY_NAME[name]
    module, inputs = step(family, build(family), kind)
    report = solar.analyze(module, list(inputs), arch="H100-SXM")
    counted = flop_counter(family, build(family), kind)
    diff = CASES[(name, kind)]
    if diff is None:
        assert 0 < report.totals.contraction_flops <= counted
    else:
        assert counted - report.totals.contraction_flops == diff
    assert report.bounds["fused"].seconds > 0


def test_decode_reads_the_cache_it_is_given():
    """A decode step's DRAM bytes grow with the cache the prefill made: every cached key and value
    (2 layers x 2 KV heads x PROMPT rows x 16, fp32) is read at least once, and every weight but
    the embedding table, of which the one token's row is read."""
    family = BY_NAME["llama"]
    module, inputs = step(family, build(family), "decode")
    report = solar.analyze(module, list(inputs), arch="H100-SXM")
    cache = 2 * LAYERS * 2 * S * HEAD_DIM * 4
    embedding = module.model.get_input_embeddings().weight
    weights = sum(p.numel() * 4 for p in module.parameters()) - embedding.numel() * 4 + 64 * 4
    assert report.totals.dram_bytes >= cache + weights
