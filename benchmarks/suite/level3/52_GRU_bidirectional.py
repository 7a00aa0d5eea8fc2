"""A 6-layer bidirectional GRU over 512 time steps, time-major (as in KernelBench's bidirectional
GRU problem); the initial state is a plain tensor attribute made in __init__.
Level 3: both directions of every layer as time-step loops; the reverse direction reads the
input from the end."""

import torch
import torch.nn as nn

BATCH = 10
SEQ = 512
INPUT = 128
HIDDEN = 256
LAYERS = 6


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bidirectional=True)
        self.h0 = torch.randn((num_layers * 2, BATCH, hidden_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.h0 = self.h0.to(x.device)
        output, _ = self.gru(x, self.h0)
        return output


def get_inputs():
    return [torch.randn(SEQ, BATCH, INPUT)]


def get_init_inputs():
    return [INPUT, HIDDEN, LAYERS]
