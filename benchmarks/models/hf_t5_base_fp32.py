"""HF transformers T5-base (T5Model from its config: no weights) in fp32, inference: an
encoder-decoder forward of batch 8, 512 encoder tokens and 128 decoder tokens (relative position
biases, causal decoder self-attention, cross-attention)."""

import torch
import torch.nn as nn
from transformers import T5Config, T5Model

BATCH = 8
SEQ = 512
TARGET = 128
LAYERS = 12
SHRUNK = {"BATCH": 1, "SEQ": 32, "TARGET": 16, "LAYERS": 1}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = T5Config(num_layers=LAYERS, num_decoder_layers=LAYERS, use_cache=False)
        self.net = T5Model(config).eval()

    def forward(self, input_ids, decoder_input_ids):
        return self.net(input_ids=input_ids, decoder_input_ids=decoder_input_ids).last_hidden_state


def get_inputs():
    return [torch.randint(0, 32128, (BATCH, SEQ)), torch.randint(0, 32128, (BATCH, TARGET))]


def get_init_inputs():
    return []
