"""HF transformers Mixtral-8x7B at full width with 2 of its 32 layers (8 experts, top-2, bf16, the
default grouped_mm experts), batch 1 x 1 token(s): one token without a cache: the 2 experts it picks per layer are all the expert weights read (memory-bound). For the H200 soundness check of the
MoE pricing (docs/BOUNDS.md §12): built on the GPU by benchmarks/measure_files.py."""

import torch
import torch.nn as nn
from transformers import MixtralConfig, MixtralForCausalLM

BATCH = 1
SEQ = 1
LAYERS = 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = MixtralConfig(
            hidden_size=4096,
            intermediate_size=14336,
            num_attention_heads=32,
            num_key_value_heads=8,
            vocab_size=32000,
            num_local_experts=8,
            num_experts_per_tok=2,
            num_hidden_layers=LAYERS,
            use_cache=False,
        )
        self.net = MixtralForCausalLM(config).to(torch.bfloat16).eval()

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 32000, (BATCH, SEQ))]


def get_init_inputs():
    return []
