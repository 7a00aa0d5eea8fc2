"""timm Swin-T (timm.create_model("swin_tiny_patch4_window7_224", pretrained=False, depths=DEPTHS): no weights) in fp16, inference: batch 16 of
224x224 images."""

import torch
import torch.nn as nn
import timm

BATCH = 16
IMAGE = 224
DEPTHS = (2, 2, 6, 2)
SHRUNK = {"BATCH": 1, "DEPTHS": (1, 1, 1, 1)}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = (
            timm.create_model("swin_tiny_patch4_window7_224", pretrained=False, depths=DEPTHS)
            .to(torch.float16)
            .eval()
        )

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)]


def get_init_inputs():
    return []
