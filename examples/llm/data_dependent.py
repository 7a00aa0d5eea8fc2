"""Data-dependent Python control flow on tensor values: the scale of the output depends on the
input's largest value, read on the host (`if x.max() > 1`). torch.export cannot trace a branch
on a value it does not know; solar's LLM frontend writes the IR (a select on the reduced value)."""

import torch
from torch import nn

BATCH = 64
FEATURES = 128
OUT_FEATURES = 96


class Model(nn.Module):
    def __init__(self, features: int, out_features: int):
        super().__init__()
        self.proj = nn.Linear(features, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        if x.max() > 1.0:  # a branch on a tensor value: not traceable
            return y * 2.0
        return y * 0.5


def get_inputs():
    return [torch.randn(BATCH, FEATURES)]


def get_init_inputs():
    return [FEATURES, OUT_FEATURES]
