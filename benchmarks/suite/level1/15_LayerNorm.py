"""LayerNorm (nn.LayerNorm with affine weight and bias) over the hidden dimension of token vectors.
Level 1: x of shape (BATCH, SEQ, HIDDEN); mean and variance per token, then scale and shift."""

import torch
import torch.nn as nn

BATCH = 16
SEQ = 1024
HIDDEN = 4096


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, HIDDEN)]


def get_init_inputs():
    return [HIDDEN]
