"""transformers LlamaForCausalLM (two decoder layers of Llama-2-7B's shape, random weights, bf16)
decoding one token at batch 1 into a StaticCache of 1024 positions held by the model, at position
512: the step a single user's request repeats per generated token."""

import torch
import torch.nn as nn
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

LAYERS = 2
CACHE = 1024
POSITION = 512
CONFIG = dict(hidden_size=4096, intermediate_size=11008, num_attention_heads=32, num_key_value_heads=32,
              num_hidden_layers=LAYERS, vocab_size=32000, max_position_embeddings=4096)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(**CONFIG)
        self.net = LlamaForCausalLM(config).to(torch.bfloat16).eval()
        self.cache = StaticCache(config=config, max_cache_len=CACHE)
        self.register_buffer("position", torch.tensor([POSITION]))

    def forward(self, input_ids):
        out = self.net(input_ids=input_ids, past_key_values=self.cache, cache_position=self.position,
                       use_cache=True)
        return out.logits


def get_inputs():
    return [torch.randint(0, 32000, (1, 1))]


def get_init_inputs():
    return []
