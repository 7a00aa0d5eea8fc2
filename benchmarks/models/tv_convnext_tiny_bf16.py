"""torchvision ConvNeXt-Tiny (no weights; stochastic-depth rates computed from a tensor in the
constructor) in bf16, inference: batch 32 of 224x224 images."""

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
        self.net = (
            torchvision.models.convnext_tiny(stochastic_depth_prob=0.1).to(torch.bfloat16).eval()
        )

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
