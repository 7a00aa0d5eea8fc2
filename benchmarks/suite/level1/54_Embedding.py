"""Token embedding lookup (nn.Embedding) scaled by sqrt(dim), as transformer inputs are.
Level 1: a gather of table rows at data-dependent positions; the table's bytes are a lower bound
(one row: the indices could all be equal), the indices and the output are moved whole."""

import math

import torch
import torch.nn as nn

BATCH = 16
SEQ = 1024
VOCAB = 32000
DIM = 1024


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.scale = math.sqrt(dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.embedding(tokens) * self.scale


def get_inputs():
    return [torch.randint(0, VOCAB, (BATCH, SEQ))]


def get_init_inputs():
    return [VOCAB, DIM]
