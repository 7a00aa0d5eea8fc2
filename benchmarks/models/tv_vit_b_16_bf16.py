"""torchvision ViT-B/16 (no weights; trunc_normal_ init in the constructor) in bf16, inference:
batch 32 of 224x224 images (196 patches + class token)."""

import torch
import torch.nn as nn
import torchvision

BATCH = 32
PATCHES = 14  # per side: the image is PATCHES * 16 pixels wide
LAYERS = 12
SHRUNK = {"BATCH": 1, "PATCHES": 4, "LAYERS": 2}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = (
            torchvision.models.VisionTransformer(
                image_size=PATCHES * 16,
                patch_size=16,
                num_layers=LAYERS,
                num_heads=12,
                hidden_dim=768,
                mlp_dim=3072,
            )
            .to(torch.bfloat16)
            .eval()
        )

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, PATCHES * 16, PATCHES * 16, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
