"""HF transformers DistilBERT-base (DistilBertModel from its config: no weights) in fp16,
inference: batch 32 of 128 tokens."""

import torch
import torch.nn as nn
from transformers import DistilBertConfig, DistilBertModel

BATCH = 32
SEQ = 128
LAYERS = 6
SHRUNK = {"BATCH": 1, "SEQ": 32, "LAYERS": 1}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = DistilBertModel(DistilBertConfig(n_layers=LAYERS)).half().eval()

    def forward(self, input_ids):
        return self.net(input_ids=input_ids).last_hidden_state


def get_inputs():
    return [torch.randint(0, 30522, (BATCH, SEQ))]


def get_init_inputs():
    return []
