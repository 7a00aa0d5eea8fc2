"""HF transformers Llama-2-70B (80 layers, grouped-query attention with 8 KV heads) (LlamaForCausalLM from its config: no weights) in bfloat16, inference: one forward of batch 1
x 2048 tokens (a prefill without a cache), causal attention, logits out."""

import torch
import torch.nn as nn
from transformers import LlamaConfig, LlamaForCausalLM

BATCH = 1
SEQ = 4096
LAYERS = 80
SHRUNK = {"SEQ": 32, "LAYERS": 1}
FLOP_DIFF = "causal"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(
            hidden_size=8192,
            intermediate_size=28672,
            num_attention_heads=64,
            num_key_value_heads=8,
            vocab_size=32000,
            max_position_embeddings=4096,
            num_hidden_layers=LAYERS,
            use_cache=False,
        )
        self.net = LlamaForCausalLM(config).to(torch.bfloat16).eval()

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 32000, (BATCH, SEQ))]


def get_init_inputs():
    return []
