"""A LeNet-5-like classifier with stride-2 convolutions in place of pooling, then flatten + linears.
Level 3: 1x32x32 digits -> conv5x5/2 (6) -> conv5x5/2 (16) -> flatten (400) -> 120 -> 84 -> 10."""

import torch
import torch.nn as nn

BATCH = 256
IN_CHANNELS = 1
IMAGE_SIZE = 32
NUM_CLASSES = 10
FC1 = 120
FC2 = 84


def conv_out(size: int, kernel: int, stride: int, padding: int = 0) -> int:
    return (size + 2 * padding - kernel) // stride + 1


class Model(nn.Module):
    def __init__(self, in_channels: int, image_size: int, fc1: int, fc2: int, num_classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 6, kernel_size=5, stride=2)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5, stride=2)
        side = conv_out(conv_out(image_size, 5, 2), 5, 2)  # 32 -> 14 -> 5
        self.fc1 = nn.Linear(16 * side * side, fc1)
        self.fc2 = nn.Linear(fc1, fc2)
        self.fc3 = nn.Linear(fc2, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def get_inputs():
    return [torch.randn(BATCH, IN_CHANNELS, IMAGE_SIZE, IMAGE_SIZE)]


def get_init_inputs():
    return [IN_CHANNELS, IMAGE_SIZE, FC1, FC2, NUM_CLASSES]
