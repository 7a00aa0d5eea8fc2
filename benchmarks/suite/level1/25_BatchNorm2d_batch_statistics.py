"""Batch normalization of a 4D activation with statistics of the batch (training-mode arithmetic).
Level 1: per-channel mean and variance over (BATCH, HEIGHT, WIDTH), then a per-channel affine map.
Running statistics are not tracked, so the module computes from the batch in train and eval mode."""

import torch
import torch.nn as nn

BATCH = 16
FEATURES = 64
HEIGHT = 256
WIDTH = 256


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(features, track_running_stats=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, FEATURES, HEIGHT, WIDTH)]


def get_init_inputs():
    return [FEATURES]
