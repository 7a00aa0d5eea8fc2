"""timm DeiT-S/16 (timm.create_model("deit_small_patch16_224", pretrained=False): no weights) in
fp32, inference: batch 64 of 224x224 images."""

import torch
import torch.nn as nn
import timm

BATCH = 64
LAYERS = 12
SHRUNK = {"BATCH": 1, "LAYERS": 1}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = timm.create_model(
            "deit_small_patch16_224", pretrained=False, depth=LAYERS
        ).eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, 224, 224)]


def get_init_inputs():
    return []
