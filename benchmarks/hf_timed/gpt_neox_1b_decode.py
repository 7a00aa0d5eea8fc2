"""transformers GPTNeoXForCausalLM at Pythia-1B's dimensions (parallel residual, partial rotary), 2 decoder layers (random weights), bf16: one decode step of
BATCH sequences attending a StaticCache of CONTEXT tokens, held as an attribute of the model and
prefilled at construction; each call writes row CONTEXT in place (the same row every call), logits
out. Part of the timed subset of the transformers corpus (benchmarks/hf_corpus.py)."""

import inspect

import torch
import torch.nn as nn
from transformers import StaticCache, GPTNeoXConfig, GPTNeoXForCausalLM

BATCH = 8
CONTEXT = 1024
LAYERS = 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = GPTNeoXConfig(hidden_size=2048, intermediate_size=8192, num_attention_heads=8, vocab_size=50304, rotary_pct=0.25, num_hidden_layers=LAYERS, max_position_embeddings=8192)
        self.lm = GPTNeoXForCausalLM._from_config(config, attn_implementation="sdpa", dtype=torch.bfloat16).eval()
        params = inspect.signature(self.lm.forward).parameters
        self.key = "cache" if "cache" in params else "past_key_values"
        self.cache = StaticCache(config=config, max_cache_len=CONTEXT + 1)
        with torch.no_grad():
            ids = torch.zeros((BATCH, CONTEXT), dtype=torch.long)
            self.lm(input_ids=ids, cache_position=torch.arange(CONTEXT), use_cache=True, **{self.key: self.cache})

    def forward(self, input_ids):
        position = torch.full((1,), CONTEXT, dtype=torch.long, device=input_ids.device)
        return self.lm(input_ids=input_ids, cache_position=position, position_ids=position[None].expand(BATCH, 1),
                       use_cache=True, **{self.key: self.cache}).logits


def get_inputs():
    return [torch.randint(0, 30000, (BATCH, 1))]


def get_init_inputs():
    return []
