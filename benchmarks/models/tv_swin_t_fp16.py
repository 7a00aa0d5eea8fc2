"""torchvision Swin-T (no weights; drop-path rates from torch.linspace(...).tolist() in the
constructor) in fp16, inference: batch 16 of 224x224 images (shifted-window attention)."""

import torch
import torch.nn as nn
import torchvision

BATCH = 16
IMAGE = 224
SHRUNK = {"BATCH": 1, "IMAGE": 64}
FLOP_DIFF = "padding"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.swin_t().half().eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)]


def get_init_inputs():
    return []
