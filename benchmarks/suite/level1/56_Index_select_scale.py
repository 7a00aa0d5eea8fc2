"""torch.index_select of rows, then a scale: the selected rows are read where they lie.
Level 1: a gather along dim 0 feeding an elementwise op (no copy of the selection)."""

import torch
import torch.nn as nn

ROWS = 65536
COLS = 1024
PICKED = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 0, rows) * 0.5


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randint(0, ROWS, (PICKED,))]


def get_init_inputs():
    return []
