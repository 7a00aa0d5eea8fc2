"""`hf:<config>` serving steps: a prefill and a decode step of Llama- and Mistral-shaped configs
(the shipped public configs, shrunk to 2 layers and hidden 64 so each analysis takes seconds),
their exact weight and KV-cache bytes, the per-layer bound, and the one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solar.api import analyze_loaded, load_hf
from solar.errors import UsageError
from solar.frontends.torch.hf import Scenario, read_config, scenario

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf"
SHRINK = dict(num_hidden_layers=2, hidden_size=64, intermediate_size=96, num_attention_heads=4, vocab_size=128)
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}


def shrunk(tmp_path: Path, name: str, kv_heads: int, **extra) -> tuple[Path, dict]:
    config = json.loads((FIXTURES / name).read_text())
    config.update(SHRINK, num_key_value_heads=kv_heads, **extra)
    path = tmp_path / f"{Path(name).stem}-small.json"
    path.write_text(json.dumps(config))
    return path, config


def params(c: dict) -> int:
    """Parameter count of a Llama-style causal LM (untied embeddings, no biases)."""
    h, i, v, layers = c["hidden_size"], c["intermediate_size"], c["vocab_size"], c["num_hidden_layers"]
    head_dim = h // c["num_attention_heads"]
    kv = c["num_key_value_heads"] * head_dim
    attn = h * h + 2 * h * kv + h * h  # q, k, v, o
    mlp = 3 * h * i  # gate, up, down
    per_layer = attn + mlp + 2 * h  # two RMSNorm weights
    embed = v * h * (1 if c.get("tie_word_embeddings") else 2)  # embed_tokens, lm_head
    return layers * per_layer + embed + h  # final norm


CASES = [  # (fixture, kv heads, scenario)
    ("llama2-7b.json", 4, Scenario("prefill", 2, 16, 0)),
    ("llama2-7b.json", 4, Scenario("decode", 2, 1, 24)),
    ("mistral-7b.json", 2, Scenario("prefill", 1, 16, 0)),
    ("mistral-7b.json", 2, Scenario("decode", 3, 1, 40)),
]


@pytest.mark.parametrize(("name", "kv_heads", "step"), CASES, ids=lambda x: getattr(x, "kind", str(x)))
def test_step_bytes_and_bounds(tmp_path, name, kv_heads, step):
    path, c = shrunk(tmp_path, name, kv_heads)
    loaded = load_hf(f"hf:{path}", step)
    report = analyze_loaded(loaded, "H100-SXM", writeback=False)  # the written KV rows reach DRAM
    s = report.serving
    dtype = DTYPE_BYTES[c["torch_dtype"]]
    head_dim = c["hidden_size"] // c["num_attention_heads"]
    rows = step.seq + step.context  # decode writes the new token's K, V at row `context`
    kv_bytes = 2 * c["num_hidden_layers"] * step.batch * kv_heads * rows * head_dim * dtype
    assert (s.scenario, s.batch, s.seq, s.context, s.layers) == (step.kind, step.batch, step.seq, step.context, 2)
    assert s.kv_cache_bytes == kv_bytes
    assert s.weight_bytes == params(c) * dtype
    # every weight is read but the embedding table (only the looked-up rows), and all of the KV cache
    embed_bytes = c["vocab_size"] * c["hidden_size"] * dtype
    assert report.totals.dram_bytes >= s.weight_bytes - embed_bytes + kv_bytes
    # the whole model is L layers plus what is outside them; each layer's bound is positive
    fused = report.bounds["fused"]
    layer = s.per_layer["fused"]
    assert 0 < layer["memory_seconds"] and 0 < layer["compute_seconds"]
    assert fused.memory_seconds >= s.layers * layer["memory_seconds"] * (1 - 1e-9)
    assert fused.compute_seconds >= s.layers * layer["compute_seconds"] * (1 - 1e-9)
    assert set(s.per_layer) == set(report.bounds)
    assert any(line.startswith("KV-cache bytes: ") for line in report.assumptions)
    data = json.loads(report.to_json())
    assert data["serving"]["weight_bytes"] == s.weight_bytes


def test_decode_reads_more_with_more_context(tmp_path):
    """The decode step's bytes grow by exactly the K and V rows added to the cache."""
    path, c = shrunk(tmp_path, "llama2-7b.json", 4)
    short, long = (analyze_loaded(load_hf(f"hf:{path}", Scenario("decode", 1, 1, n)), "H100-SXM") for n in (8, 16))
    added = 2 * 2 * 1 * 4 * 8 * (c["hidden_size"] // c["num_attention_heads"]) * 2
    assert long.serving.kv_cache_bytes - short.serving.kv_cache_bytes == added
    assert long.totals.dram_bytes - short.totals.dram_bytes >= added


def test_tied_embeddings_count_once(tmp_path):
    path, c = shrunk(tmp_path, "llama2-7b.json", 4, tie_word_embeddings=True)
    report = analyze_loaded(load_hf(f"hf:{path}", Scenario("decode", 1, 1, 4)), "H100-SXM")
    assert report.serving.weight_bytes == params(c) * 2
    assert "layers not shared: 2 layers (sharing needs 4)" in report.assumptions


def test_shipped_configs_read():
    for name, layers, kv in (("llama2-7b.json", 32, 32), ("llama2-70b.json", 80, 8), ("mistral-7b.json", 32, 8)):
        config = read_config(str(FIXTURES / name))
        assert (config.num_hidden_layers, config.num_key_value_heads) == (layers, kv)


@pytest.mark.parametrize(
    ("write", "match"),
    [
        (None, "no such config file"),
        ("{not json", "not JSON"),
        ("[1, 2]", "holds an object"),
        ('{"hidden_size": 64}', "no model_type"),
        ('{"model_type": "no-such-model"}', "unknown model_type 'no-such-model'"),
        ('{"model_type": "llama", "num_hidden_layers": "two"}', "a field of the config is invalid"),
        ('{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 8}', "lacks num_hidden_layers"),
        ('{"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4}', "lacks vocab_size"),
    ],
)
def test_config_errors(tmp_path, write, match):
    path = tmp_path / "config.json"
    if write is not None:
        path.write_text(write)
    with pytest.raises(UsageError, match=match):
        read_config(str(path))


def test_unknown_model_id():
    with pytest.raises(UsageError, match="not a model id in the local HF cache"):
        read_config("no-such-org/no-such-model-h9")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((None, 1, 8, None), "needs --scenario prefill or decode"),
        (("prefill", 1, None, None), "prefill needs --seq"),
        (("prefill", 1, 8, 4), "and no --context"),
        (("decode", 1, None, None), "decode needs --context"),
        (("decode", 1, 4, 8), "one new token"),
    ],
)
def test_scenario_flags(args, match):
    with pytest.raises(UsageError, match=match):
        scenario(*args)


def test_cli_rejects_hf_flags_on_files(capsys):
    from solar.cli import main

    assert main(["analyze", "examples/matmul.py", "--scenario", "decode"]) == 2
    assert "apply to hf:" in capsys.readouterr().err


def test_api_points_hf_to_load_hf():
    from solar.api import load

    with pytest.raises(UsageError, match="load_hf"):
        load("hf:tests/fixtures/hf/llama2-7b.json")


def test_sliding_window_smaller_than_cache_is_one_line(tmp_path):
    path, _ = shrunk(tmp_path, "mistral-7b.json", 2, sliding_window=16)
    with pytest.raises(UsageError, match=r"sliding-window attention \(window 16 < 33 cache rows\)"):
        load_hf(f"hf:{path}", Scenario("decode", 1, 1, 32))


def test_prefill_counts_causal_pairs_only(tmp_path):
    """HF's mask (built as data) is found: a prefill of S tokens computes Q·Kᵀ and P·V over the
    S(S+1)/2 causal pairs, as `is_causal` SDPA does (2 layers, hidden 64, 4 heads, S = 16)."""
    path, c = shrunk(tmp_path, "llama2-7b.json", 4)
    report = analyze_loaded(load_hf(f"hf:{path}", Scenario("prefill", 1, 16, 0)), "H100-SXM")
    t, h, i, v = 16, c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    per_layer = 4 * 2 * t * h * h + 3 * 2 * t * h * i + 2 * 2 * h * (16 * 17 // 2)
    assert report.totals.contraction_flops == 2 * per_layer + 2 * t * h * v


_ATTENTION = [
    # (config fields beside the required ones, whether every layer caches the config's K/V heads x head_dim)
    ({"model_type": "llama", "num_key_value_heads": 2}, True),
    ({"model_type": "mistral", "sliding_window": 4096}, True),
    ({"model_type": "deepseek_v3", "kv_lora_rank": 16, "qk_rope_head_dim": 8, "v_head_dim": 8}, False),
    ({"model_type": "gpt_oss", "layer_types": ["sliding_attention", "full_attention"]}, True),
    ({"model_type": "qwen3_next", "layer_types": ["linear_attention", "full_attention"]}, False),
]


@pytest.mark.parametrize("fields,plain", _ATTENTION, ids=[f[0]["model_type"] for f in _ATTENTION])
def test_cache_row_probe_only_for_other_attention(fields, plain):
    """The fake step that reads each layer's cached K/V shapes runs only where the config names
    attention other than K/V heads x head_dim (an MLA rank, another head dim, another layer kind)."""
    from transformers import AutoConfig

    from solar.frontends.torch.hf import plain_attention

    base = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 128}
    assert plain_attention(AutoConfig.for_model(**base, **fields)) is plain


def _b(seconds, compute, memory, launch):
    from types import SimpleNamespace

    return SimpleNamespace(seconds=seconds, compute_seconds=compute, memory_seconds=memory, launch_seconds=launch)


@pytest.mark.parametrize("level, zero, one, seconds", [
    ("fused", _b(3, 1, 3, 0.5), _b(5, 2, 5, 0.5), 2),  # max of the terms' differences
    ("unfused", _b(4, 1, 3, 1), _b(7, 2, 5, 2), 3),  # the difference of the times
    ("graphed", _b(4.5, 1, 3, 1.5), _b(8, 2, 5, 3), 3.5),
    ("eager_host", _b(9, 1, 3, 1), _b(15, 2, 5, 2), 6),  # the host's share too, which no term carries
])
def test_per_layer_of_each_level(level, zero, one, seconds):
    from solar.frontends.torch.hf import per_layer

    got = per_layer({level: zero}, {level: one})[level]
    assert got == {"seconds": seconds, "compute_seconds": one.compute_seconds - zero.compute_seconds,
                   "memory_seconds": one.memory_seconds - zero.memory_seconds,
                   "launch_seconds": one.launch_seconds - zero.launch_seconds}
