"""HF transformers BERT-base (BertModel from its config: no weights) in fp16, inference: batch 8 of
512 tokens with an attention mask (all tokens real)."""

import torch
import torch.nn as nn
from transformers import BertConfig, BertModel

BATCH = 8
SEQ = 512
LAYERS = 12
SHRUNK = {"BATCH": 1, "SEQ": 32, "LAYERS": 1}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = BertModel(BertConfig(num_hidden_layers=LAYERS)).half().eval()

    def forward(self, input_ids, attention_mask):
        return self.net(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def get_inputs():
    return [torch.randint(0, 30522, (BATCH, SEQ)), torch.ones(BATCH, SEQ, dtype=torch.long)]


def get_init_inputs():
    return []
