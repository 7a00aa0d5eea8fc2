"""transformers LlamaForCausalLM at Llama-3-8B's dimensions, 2 decoder layers (random weights), bf16: a prefill of
BATCH x SEQ tokens (no KV cache kept), logits out. Part of the timed subset of the transformers
corpus (benchmarks/hf_corpus.py builds the same family shrunk)."""

import torch
import torch.nn as nn
from transformers import LlamaConfig, LlamaForCausalLM

BATCH = 1
SEQ = 512
LAYERS = 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8, vocab_size=128256, rope_theta=500000.0, num_hidden_layers=LAYERS, max_position_embeddings=8192)
        self.lm = LlamaForCausalLM._from_config(config, attn_implementation="sdpa", dtype=torch.bfloat16).eval()

    def forward(self, input_ids):
        return self.lm(input_ids=input_ids, use_cache=False).logits


def get_inputs():
    return [torch.randint(0, 30000, (BATCH, SEQ))]


def get_init_inputs():
    return []
