"""A masked-language-model loss over a ragged set of positions: the logits of only the masked
positions (masked_select on a boolean mask) are scored against their labels; how many positions
are masked depends on the data."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
SEQ = 128
HIDDEN = 64
VOCAB = 1000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, hidden, masked, labels):
        picked = torch.masked_select(hidden, masked[..., None]).reshape(-1, HIDDEN)
        logits = self.head(picked)
        return F.cross_entropy(logits, torch.masked_select(labels, masked), reduction="sum")


def get_inputs():
    masked = torch.rand(BATCH, SEQ) < 0.15
    return [torch.randn(BATCH, SEQ, HIDDEN), masked, torch.randint(0, VOCAB, (BATCH, SEQ))]


def get_init_inputs():
    return []
