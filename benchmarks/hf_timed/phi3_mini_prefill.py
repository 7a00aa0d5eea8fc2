"""transformers Phi3ForCausalLM at Phi-3-mini's dimensions (fused QKV and gate-up projections), 2 decoder layers (random weights), bf16: a prefill of
BATCH x SEQ tokens (no KV cache kept), logits out. Part of the timed subset of the transformers
corpus (benchmarks/hf_corpus.py builds the same family shrunk)."""

import torch
import torch.nn as nn
from transformers import Phi3Config, Phi3ForCausalLM

BATCH = 1
SEQ = 512
LAYERS = 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = Phi3Config(hidden_size=3072, intermediate_size=8192, num_attention_heads=32, num_key_value_heads=32, vocab_size=32064, pad_token_id=0, num_hidden_layers=LAYERS, max_position_embeddings=8192)
        self.lm = Phi3ForCausalLM._from_config(config, attn_implementation="sdpa", dtype=torch.bfloat16).eval()

    def forward(self, input_ids):
        return self.lm(input_ids=input_ids, use_cache=False).logits


def get_inputs():
    return [torch.randint(0, 30000, (BATCH, SEQ))]


def get_init_inputs():
    return []
