"""timm ViT-B/16 (timm.create_model("vit_base_patch16_224", pretrained=False): no weights) in bf16, inference: batch 32 of
224x224 images."""

import torch
import torch.nn as nn
import timm

BATCH = 32
IMAGE = 224
LAYERS = 12
SHRUNK = {"BATCH": 1, "IMAGE": 224, "LAYERS": 1}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = (
            timm.create_model("vit_base_patch16_224", pretrained=False, depth=LAYERS)
            .to(torch.bfloat16)
            .eval()
        )

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
