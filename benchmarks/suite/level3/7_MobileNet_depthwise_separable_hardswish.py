"""A MobileNet-style network: a 3x3/2 stem, a stack of depthwise-separable blocks (3x3 depthwise
conv + BN + HardSwish, 1x1 pointwise conv + BN + HardSwish), global average pooling and a linear
classifier. Level 3. Batch norm uses batch statistics (running statistics are not tracked)."""

import torch
import torch.nn as nn

BATCH = 16
IMAGE_SIZE = 224
IN_CHANNELS = 3
WIDTH = 32
NUM_CLASSES = 1000

# (output channels as a multiple of WIDTH, depthwise stride) per block
BLOCKS = ((1, 1), (2, 2), (2, 1), (4, 2), (4, 1), (8, 2), (8, 1))


def conv_bn(cin: int, cout: int, kernel: int, stride: int, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout, track_running_stats=False),
        nn.Hardswish(),
    )


class Model(nn.Module):
    def __init__(self, in_channels: int, width: int, num_classes: int):
        super().__init__()
        layers = [conv_bn(in_channels, width, 3, 2)]
        cin = width
        for mult, stride in BLOCKS:
            cout = mult * width
            layers += [conv_bn(cin, cin, 3, stride, groups=cin), conv_bn(cin, cout, 1, 1)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, WIDTH, NUM_CLASSES]
