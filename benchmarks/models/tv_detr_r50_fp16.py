"""A DETR-style detector (no weights) in fp16: torchvision ResNet-50 trunk to C5, a 1x1
projection to 256 channels, a 6+6-layer nn.Transformer over the flattened feature map with 100
learned object queries, class and box heads. Batch 2 of 800x800 images (25x25 C5 map)."""

import torch
import torch.nn as nn
import torchvision

BATCH = 2
IMAGE = 800
QUERIES = 100
LAYERS = 6
SHRUNK = {"BATCH": 1, "IMAGE": 64, "QUERIES": 16, "LAYERS": 1}
FLOP_DIFF = "padding"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        trunk = torchvision.models.resnet50()
        self.backbone = nn.Sequential(*list(trunk.children())[:-2])
        self.proj = nn.Conv2d(2048, 256, 1)
        self.transformer = nn.Transformer(
            256, 8, LAYERS, LAYERS, 2048, dropout=0.0, batch_first=True
        )
        self.queries = nn.Parameter(torch.randn(QUERIES, 256))
        self.classes = nn.Linear(256, 92)
        self.boxes = nn.Sequential(
            nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4)
        )
        self.half().eval()

    def forward(self, x):
        f = self.proj(self.backbone(x))  # [B, 256, H/32, W/32]
        src = f.flatten(2).transpose(1, 2)  # [B, HW, 256]
        tgt = self.queries.unsqueeze(0).expand(x.shape[0], -1, -1)
        h = self.transformer(src, tgt)
        return self.classes(h), self.boxes(h).sigmoid()


def get_inputs():
    return [torch.randn(BATCH, 3, IMAGE, IMAGE, dtype=torch.float16)]


def get_init_inputs():
    return []
