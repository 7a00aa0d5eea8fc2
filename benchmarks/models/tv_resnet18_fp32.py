"""torchvision ResNet-18 (no weights) in fp32, inference: batch 64 of 224x224 images."""

import torch
import torch.nn as nn
import torchvision

BATCH = 64
IMAGE = 224
DTYPE = "float32"  # a name in torch
SHRUNK = {"BATCH": 1, "IMAGE": 64}
FLOP_DIFF = "padding"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.resnet18().to(getattr(torch, DTYPE)).eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=getattr(torch, DTYPE))]


def get_init_inputs():
    return []
