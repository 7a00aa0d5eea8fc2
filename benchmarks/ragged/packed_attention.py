"""Packed sequences (varlen attention): the tokens of SEQS sequences of different lengths lie end to
end in one [HEADS, TOTAL, DIM] tensor; `lengths` (a tensor) says where each ends, and every token
attends causally the tokens of its own sequence only: the mask is block-diagonal, built from the
sequence id of each token (how many sequence ends lie at or before it, from the cumulative
lengths).
Which pairs the mask keeps depends on the data: the attention is priced as dense over the packed
batch (all TOTAL x TOTAL pairs, the mask read as data)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

SEQS = 4
TOTAL = 256
HEADS = 4
DIM = 32


class Model(nn.Module):
    def forward(self, q, k, v, lengths):
        pos = torch.arange(TOTAL)
        seq = (pos[:, None] >= lengths.cumsum(0)[None, :]).sum(-1)
        mask = (seq[:, None] == seq[None, :]) & (pos[:, None] >= pos[None, :])
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def get_inputs():
    return [torch.randn(HEADS, TOTAL, DIM) for _ in range(3)] + [torch.tensor([100, 60, 64, 32])]


def get_init_inputs():
    return []
