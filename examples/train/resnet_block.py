"""A ResNet basic block (conv-BN-ReLU-conv-BN + identity, ReLU) trained with AdamW:
`solar analyze examples/train/resnet_block.py --train`."""

import torch
import torch.nn as nn

BATCH = 32
CHANNELS = 64
SIZE = 56


class Model(nn.Module):
    def __init__(self, channels: int = CHANNELS) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, SIZE, SIZE)]


def get_init_inputs():
    return []
