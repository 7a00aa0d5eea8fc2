"""The timed subset of the transformers corpus: families of benchmarks/hf_corpus.py at a real model's
dimensions (LAYERS decoder layers, random weights, bf16), each as the steps of SCENARIOS, built by
name (`llama3_8b:decode`) where benchmarks/measure_files.py and eager_host_measure.py take files.

A decode step attends a StaticCache held by the module and filled with `context` tokens when it is
built; every call writes row `context` again, so repeated timed calls do the same work."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from benchmarks.hf_corpus import FAMILIES, Prefill, cache_key  # noqa: E402
from solar.errors import UsageError  # noqa: E402

LAYERS = 2
POSITIONS = 8192  # max_position_embeddings: above every context here
TOKEN_IDS = 30000  # input ids drawn from [0, TOKEN_IDS): within every vocabulary here


@dataclass(frozen=True)
class Timed:
    """A family of hf_corpus.FAMILIES at a real model's config fields (on top of the family's own),
    with the attention implementation it is timed with."""

    name: str
    family: str
    fields: dict = field(default_factory=dict)
    attention: str = "sdpa"


TIMED = (
    Timed("llama3_8b", "llama", {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
                                 "num_key_value_heads": 8, "vocab_size": 128256, "rope_theta": 500000.0}),
    # eager attention: logit soft-capping; the sliding window above every context here
    Timed("gemma2_9b", "gemma2", {"hidden_size": 3584, "intermediate_size": 14336, "num_attention_heads": 16,
                                  "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000,
                                  "sliding_window": 4096}, attention="eager"),
    # fused QKV and gate-up projections
    Timed("phi3_mini", "phi3", {"hidden_size": 3072, "intermediate_size": 8192, "num_attention_heads": 32,
                                "num_key_value_heads": 32, "vocab_size": 32064}),
    # Pythia-1B: parallel residual, partial rotary
    Timed("gpt_neox_1b", "gpt_neox", {"hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 8,
                                      "vocab_size": 50304, "rotary_pct": 0.25}),
    # 8 experts, top-2, transformers' grouped-GEMM dispatch
    Timed("mixtral_8x7b", "mixtral", {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
                                      "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2,
                                      "vocab_size": 32000}),
)


@dataclass(frozen=True)
class Scenario:
    """`batch` sequences of `tokens` new tokens each, after `context` cached ones (0: no cache kept)."""

    batch: int
    tokens: int
    context: int


SCENARIOS = {"prefill": Scenario(batch=1, tokens=512, context=0), "decode": Scenario(batch=8, tokens=1, context=1024)}
NAMES = tuple(f"{t.name}:{s}" for t in TIMED for s in SCENARIOS)


def config_of(timed: Timed):
    """The family's config with its own fields, then the row's, LAYERS layers and POSITIONS."""
    from transformers import AutoConfig

    family = next(f for f in FAMILIES if f.name == timed.family)
    fields = {**family.fields, **timed.fields, "num_hidden_layers": LAYERS, "max_position_embeddings": POSITIONS}
    return AutoConfig.for_model(family.model_type, **fields)


def causal_lm(timed: Timed) -> torch.nn.Module:
    """The family's causal LM at config_of(timed), bf16, random weights, eval mode."""
    from transformers import AutoModelForCausalLM

    lm = AutoModelForCausalLM.from_config(config_of(timed), attn_implementation=timed.attention, dtype=torch.bfloat16)
    return lm.eval()


def rewind(cache, position: int) -> None:
    """Set the next row the cache writes back to `position`. transformers 5 keeps the count of
    cached tokens in each layer (a tensor, and a Python int in sliding-window layers), writes where
    it says and advances it, whatever `cache_position` is passed; earlier versions keep no count
    and write at `cache_position`."""
    for layer in getattr(cache, "layers", ()):
        if isinstance(getattr(layer, "cumulative_length", None), torch.Tensor):
            layer.cumulative_length.fill_(position)
        if hasattr(layer, "cumulative_length_int"):
            layer.cumulative_length_int = position


class HeldDecode(torch.nn.Module):
    """One new token per sequence attending a StaticCache held as an attribute, filled with `context`
    tokens at construction; each call writes row `context` in place."""

    def __init__(self, lm: torch.nn.Module, batch: int, context: int) -> None:
        from transformers import StaticCache

        super().__init__()
        self.lm, self.context, self.key = lm, context, cache_key(lm)
        self.cache = StaticCache(config=lm.config, max_cache_len=context + 1)
        with torch.no_grad():
            ids = torch.zeros((batch, context), dtype=torch.long)
            lm(input_ids=ids, cache_position=torch.arange(context), use_cache=True, **{self.key: self.cache})

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        rewind(self.cache, self.context)
        position = torch.full((1,), self.context, dtype=torch.long, device=input_ids.device)
        return self.lm(input_ids=input_ids, cache_position=position, position_ids=position[None].expand(len(input_ids), 1),
                       use_cache=True, **{self.key: self.cache}).logits


def build(timed: Timed, scenario: Scenario) -> tuple[torch.nn.Module, list[torch.Tensor]]:
    """The step's module and inputs, made on the default device."""
    lm = causal_lm(timed)
    ids = torch.randint(0, min(TOKEN_IDS, lm.config.vocab_size), (scenario.batch, scenario.tokens))
    if scenario.context == 0:
        return Prefill(lm, "causal", use_cache=False), [ids]
    return HeldDecode(lm, scenario.batch, scenario.context), [ids]


def program(name: str) -> tuple[torch.nn.Module, list[torch.Tensor]]:
    """The module and inputs of a timed step named `FAMILY:SCENARIO` (one of NAMES)."""
    if name not in NAMES:
        raise UsageError(f"{name}: no such file or timed transformers step; the steps are {', '.join(NAMES)}")
    family, scenario = name.split(":")
    return build(next(t for t in TIMED if t.name == family), SCENARIOS[scenario])
