"""A VGG-style stack of 3x3 conv + ReLU layers that downsamples with stride-2 convs (no pooling).
Level 3: 16x3x224x224 -> three stages (64, 128, 256 channels) -> 16x256x28x28 feature map."""

import torch
import torch.nn as nn

BATCH = 16
IN_CHANNELS = 3
IMAGE_SIZE = 224
BASE_WIDTH = 64
STAGES = 3


def conv_relu(in_channels: int, out_channels: int, stride: int) -> list[nn.Module]:
    return [nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1), nn.ReLU()]


class Model(nn.Module):
    def __init__(self, in_channels: int, base_width: int, stages: int):
        super().__init__()
        layers = []
        width = in_channels
        for stage in range(stages):
            out = base_width * 2 ** stage
            layers += conv_relu(width, out, stride=1)  # mix channels at full resolution
            layers += conv_relu(out, out, stride=2)  # downsample by 2 instead of max-pooling
            width = out
        self.features = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, BASE_WIDTH, STAGES]
