"""GEMM with bias (torch.addmm), Swish activation x * sigmoid(x), then a sum over features.
Level 2: (BATCH, IN_FEATURES) -> (BATCH, OUT_FEATURES) -> (BATCH, 1)."""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 4096
OUT_FEATURES = 2048


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.bias, x, self.weight)
        y = y * torch.sigmoid(y)
        return y.sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
