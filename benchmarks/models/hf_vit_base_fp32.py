"""HF transformers ViT-base (ViTModel from its config: no weights) in fp32, inference: batch 32 of
224x224 images."""

import torch
import torch.nn as nn
from transformers import ViTConfig, ViTModel

BATCH = 32
LAYERS = 12
SHRUNK = {"BATCH": 1, "LAYERS": 1}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = ViTModel(ViTConfig(num_hidden_layers=LAYERS), add_pooling_layer=False).eval()

    def forward(self, pixel_values):
        return self.net(pixel_values=pixel_values).last_hidden_state


def get_inputs():
    return [torch.randn(BATCH, 3, 224, 224)]


def get_init_inputs():
    return []
