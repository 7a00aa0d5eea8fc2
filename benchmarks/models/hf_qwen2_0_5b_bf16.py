"""HF transformers Qwen2-0.5B (Qwen2ForCausalLM from its config: no weights) in bfloat16, inference: one forward of batch 1
x 2048 tokens (a prefill without a cache), causal attention, logits out."""

import torch
import torch.nn as nn
from transformers import Qwen2Config, Qwen2ForCausalLM

BATCH = 1
SEQ = 2048
LAYERS = 24
SHRUNK = {"SEQ": 32, "LAYERS": 1}
FLOP_DIFF = "causal"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = Qwen2Config(
            hidden_size=896,
            intermediate_size=4864,
            num_attention_heads=14,
            num_key_value_heads=2,
            vocab_size=151936,
            tie_word_embeddings=True,
            num_hidden_layers=LAYERS,
            use_cache=False,
        )
        self.net = Qwen2ForCausalLM(config).to(torch.bfloat16).eval()

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 151936, (BATCH, SEQ))]


def get_init_inputs():
    return []
