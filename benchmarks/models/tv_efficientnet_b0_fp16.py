"""torchvision EfficientNet-B0 (no weights) in fp16, inference: batch 64 of 224x224 images
(depthwise convolutions, squeeze-excitation, SiLU)."""

import torch
import torch.nn as nn
import torchvision

BATCH = 64
IMAGE = 224
SHRUNK = {"BATCH": 1, "IMAGE": 64}
FLOP_DIFF = "padding"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.efficientnet_b0().half().eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)]


def get_init_inputs():
    return []
