"""A padded batch packed before its MLP: BATCH sequences padded to SEQ tokens, `lengths` says how
many of each are real; the real tokens are picked with a boolean mask (x[mask]), run through the
MLP, and written back into a zero padded output (index_put with the mask). How many tokens are
real depends on the data."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 64
HIDDEN = 128
FFN = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(HIDDEN, FFN)
        self.down = nn.Linear(FFN, HIDDEN)

    def forward(self, x, lengths):
        mask = torch.arange(SEQ)[None, :] < lengths[:, None]
        tokens = x[mask]
        y = self.down(F.gelu(self.up(tokens)))
        out = torch.zeros_like(x)
        out[mask] = y
        return out


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN), torch.tensor([64, 50, 33, 64, 10, 1, 40, 64])]


def get_init_inputs():
    return []
