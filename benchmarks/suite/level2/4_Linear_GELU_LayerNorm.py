"""Linear projection of token vectors, GELU, then LayerNorm over the output features.
Level 2: (BATCH, SEQ, IN_FEATURES) -> (BATCH, SEQ, OUT_FEATURES); the norm needs a full row."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
SEQ = 512
IN_FEATURES = 1024
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        x = F.gelu(x)
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, SEQ, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
