"""A small valid model: the corpus's CLI-flag and spec cases analyse it."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(a @ b)


def get_inputs():
    return [torch.randn(64, 32), torch.randn(32, 16)]


def get_init_inputs():
    return []
