"""HF transformers Whisper-small encoder (WhisperModel from its config, .get_encoder(): no
weights) in fp16, inference: batch 8 of 30 s of audio (80 mel bins x 3000 frames; two
convolutions, 12 transformer layers over 1500 positions)."""

import torch
import torch.nn as nn
from transformers import WhisperConfig, WhisperModel

BATCH = 8
FRAMES = 3000
LAYERS = 12
SHRUNK = {"BATCH": 1, "FRAMES": 64, "LAYERS": 1}
FLOP_DIFF = "none"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        config = WhisperConfig(
            d_model=768,
            encoder_layers=LAYERS,
            decoder_layers=LAYERS,
            encoder_attention_heads=12,
            decoder_attention_heads=12,
            encoder_ffn_dim=3072,
            decoder_ffn_dim=3072,
            max_source_positions=FRAMES // 2,
        )
        self.net = WhisperModel(config).get_encoder().half().eval()

    def forward(self, input_features):
        return self.net(input_features).last_hidden_state


def get_inputs():
    return [torch.randn(BATCH, 80, FRAMES, dtype=torch.float16)]


def get_init_inputs():
    return []
