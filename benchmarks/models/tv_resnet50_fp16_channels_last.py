"""torchvision ResNet-50 (no weights) in fp16, channels-last, inference: batch 32 of 224x224 images."""

import torch
import torch.nn as nn
import torchvision

BATCH = 32
IMAGE = 224
SHRUNK = {"BATCH": 1, "IMAGE": 64}
FLOP_DIFF = "padding"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.resnet50().half().to(memory_format=torch.channels_last).eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    x = torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)
    return [x.to(memory_format=torch.channels_last)]


def get_init_inputs():
    return []
