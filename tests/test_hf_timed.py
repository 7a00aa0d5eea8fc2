"""The timed transformers subset (benchmarks/hf_timed.py): every step named once, each row's config
at its model's fields, an unknown name refused in one line, and the held-cache decode step at small
sizes: repeated calls write the same cache row and give the same logits (with a sliding-window
family too), the prefill's logits of the prompt's shape; a named step's eager_host row is the committed one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import solar.frontends.torch  # noqa: F401  (before transformers: see frontends/torch/libraries.py)

pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from benchmarks.hf_corpus import FAMILIES  # noqa: E402
from benchmarks.hf_timed import NAMES, SCENARIOS, TIMED, Scenario, Timed, build, config_of, program  # noqa: E402
from benchmarks.measure_files import file_name  # noqa: E402
from solar.errors import UsageError  # noqa: E402

SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
         "head_dim": 16, "vocab_size": 256}


def test_every_timed_step_is_named_once_from_a_causal_family():
    assert NAMES == tuple(f"{t}:{s}" for t in ("llama3_8b", "gemma2_9b", "phi3_mini", "gpt_neox_1b", "mixtral_8x7b")
                          for s in ("prefill", "decode"))
    kinds = {f.name: f.kind for f in FAMILIES}
    assert {kinds[t.family] for t in TIMED} == {"causal"}
    assert SCENARIOS == {"prefill": Scenario(1, 512, 0), "decode": Scenario(8, 1, 1024)}


# (row, config field, value): the real model's fields over the family's shrunk ones
FIELDS = [
    ("llama3_8b", "num_key_value_heads", 8), ("llama3_8b", "vocab_size", 128256),
    ("gemma2_9b", "sliding_window", 4096), ("gemma2_9b", "head_dim", 256),
    ("phi3_mini", "pad_token_id", 0), ("phi3_mini", "hidden_size", 3072),
    ("gpt_neox_1b", "hidden_size", 2048), ("mixtral_8x7b", "num_local_experts", 8),
    *((t.name, "num_hidden_layers", 2) for t in TIMED),
]


@pytest.mark.parametrize("name,key,value", FIELDS)
def test_each_row_has_its_models_config(name, key, value):
    assert getattr(config_of(next(t for t in TIMED if t.name == name)), key) == value


def test_an_unknown_step_is_refused_in_one_line():
    with pytest.raises(UsageError, match=r"^llama3_8b:train: no such file or timed transformers step; the steps are llama3_8b:prefill, "):
        program("llama3_8b:train")


def test_a_named_step_keeps_its_name_as_a_row_name():
    assert [file_name(d)(Path("llama3_8b:decode")) for d in (1, 2)] == ["llama3_8b:decode"] * 2
    assert file_name(2)(Path("level1/1_A.py")) == "level1/1_A.py"


@pytest.mark.parametrize("family,fields", [("llama", SMALL), ("gemma2", {**SMALL, "sliding_window": 64})])
def test_the_held_cache_decode_does_the_same_work_every_call(family, fields):
    torch.manual_seed(0)
    decode, inputs = build(Timed("small", family, fields, attention="eager"), Scenario(batch=2, tokens=1, context=8))
    with torch.no_grad():
        first, *again = [decode(*inputs) for _ in range(3)]
    assert first.shape == (2, 1, 256)
    assert all(torch.equal(first, logits) for logits in again)
    for layer in decode.cache.layers:
        assert int(layer.get_seq_length()) == 9  # the context and the row each call writes


def test_the_prefill_keeps_no_cache_and_gives_the_prompts_logits():
    torch.manual_seed(0)
    prefill, inputs = build(Timed("small", "llama", SMALL), Scenario(batch=1, tokens=5, context=0))
    assert [tuple(x.shape) for x in inputs] == [(1, 5)]
    with torch.no_grad():
        assert prefill(*inputs).shape == (1, 5, 256)


def test_a_named_step_is_joined_with_its_bounds():
    from benchmarks.join_measured import file_bounds

    bounds = file_bounds(ROOT / "benchmarks" / "models" / "gpt_neox_1b:decode", "H100-SXM")
    assert {"fused", "unfused", "eager_host"} <= set(bounds)
    assert 0 < bounds["fused"] <= bounds["unfused"] * (1 + 1e-12)


def test_a_named_step_gives_its_committed_eager_host_row():
    from benchmarks.eager_host_rows import NAMED_LEVEL, row, sources
    from benchmarks.rows import read_rows

    committed = {r["problem"]: r for r in read_rows(ROOT / "benchmarks" / "results" / "h100" / "hf_timed_eager_host_rows.jsonl")}
    assert sources(["all"]) == [(Path(name), NAMED_LEVEL) for name in NAMES]
    assert set(committed) == set(NAMES) and {r["level"] for r in committed.values()} == {NAMED_LEVEL}
    got = row(Path("gpt_neox_1b:decode"), "H100-SXM")
    assert got == {k: v for k, v in committed["gpt_neox_1b:decode"].items() if k not in ("problem", "level", "arch")}


def test_an_unknown_step_has_no_eager_host_row():
    from benchmarks.eager_host_rows import row

    with pytest.raises(UsageError, match=r"^llama3_8b:train: no such file or timed transformers step"):
        row(Path("llama3_8b:train"), "H100-SXM")
