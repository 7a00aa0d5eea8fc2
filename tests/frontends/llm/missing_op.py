"""A program with one op solar has no lowering for (torch.hypot); the rest lowers as usual."""

import torch
from torch import nn

ROWS = 32
COLS = 40


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.exp(torch.hypot(x, y)) * x


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
