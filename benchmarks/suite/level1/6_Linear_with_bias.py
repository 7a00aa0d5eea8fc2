"""A fully connected layer y = x @ W.T + b (nn.Linear with bias) on a batch of vectors.
Level 1: a contraction against a parameter matrix plus a broadcast bias add."""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 4096
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
