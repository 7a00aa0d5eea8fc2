"""Group normalization with GROUPS groups of CHANNELS_PER_GROUP channels and an affine transform.
Level 1: statistics per (sample, group), then a per-(sample, channel) scale and shift."""

import torch
import torch.nn as nn

BATCH = 16
GROUPS = 8
CHANNELS_PER_GROUP = 8
FEATURES = GROUPS * CHANNELS_PER_GROUP
HEIGHT = 256
WIDTH = 256


class Model(nn.Module):
    def __init__(self, features: int, groups: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    return [torch.randn(BATCH, FEATURES, HEIGHT, WIDTH)]


def get_init_inputs():
    return [FEATURES, GROUPS]
