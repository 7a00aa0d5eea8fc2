"""torchvision VGG-16 with batch norm (no weights) in fp16, inference: batch 16 of 224x224 images."""

import torch
import torch.nn as nn
import torchvision

BATCH = 16
IMAGE = 224
SHRUNK = {"BATCH": 1, "IMAGE": 32}
FLOP_DIFF = "padding"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.vgg16_bn().half().eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)]


def get_init_inputs():
    return []
