"""transformers GPTNeoXForCausalLM at Pythia-1B's dimensions (parallel residual, partial rotary), 2 decoder layers (random weights), bf16: a prefill of
BATCH x SEQ tokens (no KV cache kept), logits out. Part of the timed subset of the transformers
corpus (benchmarks/hf_corpus.py builds the same family shrunk)."""

import torch
import torch.nn as nn
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

BATCH = 1
SEQ = 512
LAYERS = 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = GPTNeoXConfig(hidden_size=2048, intermediate_size=8192, num_attention_heads=8, vocab_size=50304, rotary_pct=0.25, num_hidden_layers=LAYERS, max_position_embeddings=8192)
        self.lm = GPTNeoXForCausalLM._from_config(config, attn_implementation="sdpa", dtype=torch.bfloat16).eval()

    def forward(self, input_ids):
        return self.lm(input_ids=input_ids, use_cache=False).logits


def get_inputs():
    return [torch.randint(0, 30000, (BATCH, SEQ))]


def get_init_inputs():
    return []
