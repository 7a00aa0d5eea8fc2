"""torchvision MobileNetV3-Large (no weights) in fp16 at batch 1 of 224x224 images, inference: a small CNN
whose kernels are each a few microseconds, the way it is served one image at a time."""

import torch
import torch.nn as nn
import torchvision

BATCH = 1
IMAGE = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.mobilenet_v3_large().half().eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)]


def get_init_inputs():
    return []
