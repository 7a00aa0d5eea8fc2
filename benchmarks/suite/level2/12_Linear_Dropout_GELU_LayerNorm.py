"""Linear projection of token vectors, dropout (training mode), GELU, then LayerNorm.
Level 2: dropout draws a random mask; its outputs cannot be compared element by element, so
`solar verify` checks every other op on its own."""

import torch
import torch.nn as nn

BATCH = 8
SEQ = 512
IN_FEATURES = 1024
OUT_FEATURES = 4096
DROPOUT_PERCENT = 10


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, dropout_p: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.act(self.dropout(self.linear(x))))


def get_inputs():
    return [torch.randn(BATCH, SEQ, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, DROPOUT_PERCENT / 100]
