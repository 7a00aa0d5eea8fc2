"""MLP-Mixer-B/16 written with einops (Rearrange to patches, rearrange for token mixing, Reduce
for the pooled head), no weights, in fp16, inference: batch 32 of 224x224 images."""

import torch
import torch.nn as nn
from einops import rearrange
from einops.layers.torch import Rearrange, Reduce

BATCH = 32
LAYERS = 12
SHRUNK = {"BATCH": 1, "LAYERS": 1}
FLOP_DIFF = "none"
DIM = 768
TOKENS = 196


class MixerBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM)
        self.tokens = nn.Sequential(nn.Linear(TOKENS, 384), nn.GELU(), nn.Linear(384, TOKENS))
        self.norm2 = nn.LayerNorm(DIM)
        self.channels = nn.Sequential(nn.Linear(DIM, 3072), nn.GELU(), nn.Linear(3072, DIM))

    def forward(self, x):
        y = rearrange(self.norm1(x), "b n c -> b c n")
        x = x + rearrange(self.tokens(y), "b c n -> b n c")
        return x + self.channels(self.norm2(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=16, p2=16),
            nn.Linear(16 * 16 * 3, DIM),
            *[MixerBlock() for _ in range(LAYERS)],
            nn.LayerNorm(DIM),
            Reduce("b n c -> b c", "mean"),
            nn.Linear(DIM, 1000),
        )
        self.half().eval()

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, 3, 224, 224, dtype=torch.float16)]


def get_init_inputs():
    return []
