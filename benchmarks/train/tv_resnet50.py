"""A training step of torchvision ResNet-50 (no weights; train mode, batch norm updating its running
statistics) on a batch of 64 images of 224x224 in fp32: `solar analyze benchmarks/train/tv_resnet50.py
--train --arch H100-SXM`, timed by `solar validate ... --train` (loss = sum of the logits, AdamW)."""

import torch
import torch.nn as nn
from torchvision.models import resnet50

BATCH = 64
SIZE = 224


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = resnet50(weights=None)

    def forward(self, images):
        return self.net(images)


def get_inputs():
    return [torch.randn(BATCH, 3, SIZE, SIZE)]


def get_init_inputs():
    return []
