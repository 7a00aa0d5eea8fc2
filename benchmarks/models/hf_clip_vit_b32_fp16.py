"""HF transformers CLIP ViT-B/32 (CLIPModel from its config: no weights) in fp16, inference:
batch 32 images of 224x224 against 32 captions of 77 tokens (causal text encoder), similarity
logits out."""

import torch
import torch.nn as nn
from transformers import CLIPConfig, CLIPModel

BATCH = 32
TOKENS = 77
LAYERS = 12
SHRUNK = {"BATCH": 2, "TOKENS": 16, "LAYERS": 1}
FLOP_DIFF = "causal"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = CLIPConfig(
            text_config={"num_hidden_layers": LAYERS},
            vision_config={"num_hidden_layers": LAYERS, "patch_size": 32},
        )
        self.net = CLIPModel(config).half().eval()

    def forward(self, input_ids, pixel_values):
        return self.net(input_ids=input_ids, pixel_values=pixel_values).logits_per_image


def get_inputs():
    return [
        torch.randint(0, 49408, (BATCH, TOKENS)),
        torch.randn(BATCH, 3, 224, 224, dtype=torch.float16),
    ]


def get_init_inputs():
    return []
