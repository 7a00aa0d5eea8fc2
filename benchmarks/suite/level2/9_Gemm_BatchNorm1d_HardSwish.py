"""Linear layer, batch norm over the batch (batch statistics), then HardSwish.
Level 2: per-feature statistics over the batch of GEMM outputs, then an elementwise activation.
Running statistics are not tracked, so the module uses batch statistics in train and eval mode."""

import torch
import torch.nn as nn

BATCH = 1024
IN_FEATURES = 4096
OUT_FEATURES = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, track_running_stats=False)
        self.act = nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.bn(self.linear(x)))


def get_inputs():
    return [torch.randn(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
