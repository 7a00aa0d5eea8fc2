"""A VGG-style network: three stages of two 3x3 convolutions with ReLU, each followed by 2x2 max
pooling, adaptive average pooling to 7x7 and a two-layer classifier with dropout p=0 (as
KernelBench's VGG writes it). Level 3."""

import torch
import torch.nn as nn

BATCH = 8
IMAGE_SIZE = 224
IN_CHANNELS = 3
BASE_CHANNELS = 64
HIDDEN = 4096
NUM_CLASSES = 1000


def stage(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2, 2),
    )


class Model(nn.Module):
    def __init__(self, in_channels: int, base: int, hidden: int, num_classes: int):
        super().__init__()
        self.features = nn.Sequential(
            stage(in_channels, base), stage(base, 2 * base), stage(2 * base, 4 * base)
        )
        self.pool = nn.AdaptiveAvgPool2d(7)
        self.classifier = nn.Sequential(
            nn.Linear(4 * base * 7 * 7, hidden),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.0),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, BASE_CHANNELS, HIDDEN, NUM_CLASSES]
