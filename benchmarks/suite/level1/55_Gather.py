"""torch.gather along the last dim: pick TOP entries of each row at given positions, squashed
with a sigmoid. Level 1: data-dependent reads (indirect index terms) feeding an elementwise op."""

import torch
import torch.nn as nn

ROWS = 8192
COLS = 4096
TOP = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(torch.gather(x, 1, index))


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, COLS, (ROWS, TOP))]


def get_init_inputs():
    return []
