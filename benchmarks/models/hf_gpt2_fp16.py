"""HF transformers GPT-2 small (GPT2LMHeadModel from its config: no weights; tied input/output
embeddings) in fp16, inference: batch 8 of 1024 tokens, causal attention, logits out."""

import torch
import torch.nn as nn
from transformers import GPT2Config, GPT2LMHeadModel

BATCH = 8
SEQ = 1024
LAYERS = 12
SHRUNK = {"BATCH": 1, "SEQ": 32, "LAYERS": 1}
FLOP_DIFF = "causal"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = GPT2LMHeadModel(GPT2Config(n_layer=LAYERS, use_cache=False)).half().eval()

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).logits


def get_inputs():
    return [torch.randint(0, 50257, (BATCH, SEQ))]


def get_init_inputs():
    return []
