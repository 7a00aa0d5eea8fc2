"""Advanced indexing x[rows, cols] with two index tensors broadcast together, plus a bias.
Level 1: aten.index.Tensor as indirect reads in both dims."""

import torch
import torch.nn as nn

ROWS = 4096
COLS = 4096
PICKED = 1024
PER_ROW = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
        return x[rows[:, None], cols] + 1.0


def get_inputs():
    rows = torch.randint(0, ROWS, (PICKED,))
    cols = torch.randint(0, COLS, (PICKED, PER_ROW))
    return [torch.randn(ROWS, COLS), rows, cols]


def get_init_inputs():
    return []
