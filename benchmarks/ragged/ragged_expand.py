"""Per-sequence features broadcast to a ragged batch: each of SEQS sequences has a feature row and a
length (a tensor), repeat_interleave(features, lengths) gives one row per token of the packed
batch, which is added to the packed tokens' projection. The packed length (the sum of lengths)
depends on the data."""

import torch
import torch.nn as nn

SEQS = 8
HIDDEN = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(HIDDEN, HIDDEN, bias=False)

    def forward(self, features, lengths):
        per_token = torch.repeat_interleave(features, lengths, dim=0)
        return self.proj(per_token).relu().sum(dim=0)


def get_inputs():
    return [torch.randn(SEQS, HIDDEN), torch.tensor([5, 17, 3, 40, 8, 1, 12, 30])]


def get_init_inputs():
    return []
