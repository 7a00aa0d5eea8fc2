"""transformers Gemma2ForCausalLM at Gemma-2-9B's dimensions (eager attention with logit soft-capping; sliding window 4096 above the context), 2 decoder layers (random weights), bf16: a prefill of
BATCH x SEQ tokens (no KV cache kept), logits out. Part of the timed subset of the transformers
corpus (benchmarks/hf_corpus.py builds the same family shrunk)."""

import torch
import torch.nn as nn
from transformers import Gemma2Config, Gemma2ForCausalLM

BATCH = 1
SEQ = 512
LAYERS = 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = Gemma2Config(hidden_size=3584, intermediate_size=14336, num_attention_heads=16, num_key_value_heads=8, head_dim=256, vocab_size=256000, sliding_window=4096, num_hidden_layers=LAYERS, max_position_embeddings=8192)
        self.lm = Gemma2ForCausalLM._from_config(config, attn_implementation="eager", dtype=torch.bfloat16).eval()

    def forward(self, input_ids):
        return self.lm(input_ids=input_ids, use_cache=False).logits


def get_inputs():
    return [torch.randint(0, 30000, (BATCH, SEQ))]


def get_init_inputs():
    return []
