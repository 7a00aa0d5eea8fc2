"""A small ResNet: 7x7/2 stem with batch norm and 3x3/2 max pooling, two stages of two basic
blocks (3x3 conv + BN + ReLU twice, identity or 1x1/2 projection shortcut), global average
pooling and a linear classifier. Level 3. Batch norm uses batch statistics (training-mode
arithmetic; running statistics are not tracked)."""

import torch
import torch.nn as nn

BATCH = 8
IMAGE_SIZE = 224
IN_CHANNELS = 3
STEM_CHANNELS = 64
NUM_CLASSES = 1000


def bn(channels: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(channels, track_running_stats=False)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = bn(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = bn(cout)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), bn(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class Model(nn.Module):
    def __init__(self, in_channels: int, stem_channels: int, num_classes: int):
        super().__init__()
        c = stem_channels
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, c, 7, 2, 3, bias=False), bn(c), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        self.stage1 = nn.Sequential(BasicBlock(c, c, 1), BasicBlock(c, c, 1))
        self.stage2 = nn.Sequential(BasicBlock(c, 2 * c, 2), BasicBlock(2 * c, 2 * c, 1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2 * c, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stage2(self.stage1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, STEM_CHANNELS, NUM_CLASSES]
