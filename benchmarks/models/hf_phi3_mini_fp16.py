"""HF transformers Phi-3-mini (Phi3ForCausalLM from its config: no weights) in float16, inference: one forward of batch 1
x 2048 tokens (a prefill without a cache), causal attention, logits out."""

import torch
import torch.nn as nn
from transformers import Phi3Config, Phi3ForCausalLM

BATCH = 1
SEQ = 2048
LAYERS = 32
SHRUNK = {"SEQ": 32, "LAYERS": 1}
FLOP_DIFF = "causal"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = Phi3Config(
            hidden_size=3072,
            intermediate_size=8192,
            num_attention_heads=32,
            num_key_value_heads=32,
            vocab_size=32064,
            num_hidden_layers=LAYERS,
            use_cache=False,
        )
        self.net = Phi3ForCausalLM(config).to(torch.float16).eval()

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 32064, (BATCH, SEQ))]


def get_init_inputs():
    return []
