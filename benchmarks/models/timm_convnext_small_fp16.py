"""timm ConvNeXt-S (timm.create_model("convnext_small", pretrained=False): no weights) in fp16, inference: batch 32 of
224x224 images."""

import torch
import torch.nn as nn
import timm

BATCH = 32
IMAGE = 224
SHRUNK = {"BATCH": 1, "IMAGE": 64}
FLOP_DIFF = "padding"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = timm.create_model("convnext_small", pretrained=False).to(torch.float16).eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)]


def get_init_inputs():
    return []
