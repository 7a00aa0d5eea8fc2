"""A 6-layer LSTM over 512 time steps followed by a linear head on the last step (as in
KernelBench's LSTM problem): initial states are plain tensor attributes made with torch.randn in
__init__ and moved with .to(x.device) in forward.
Level 3: the recurrence is lowered whole (never decomposed step by step): per layer one input
projection for all steps, then a time-step loop of the recurrent matmul and the cell update."""

import torch
import torch.nn as nn

BATCH = 10
SEQ = 512
INPUT = 128
HIDDEN = 256
LAYERS = 6
OUTPUT = 10


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int, output_size: int):
        super().__init__()
        self.h0 = torch.randn((num_layers, BATCH, hidden_size))
        self.c0 = torch.randn((num_layers, BATCH, hidden_size))
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.h0 = self.h0.to(x.device)
        self.c0 = self.c0.to(x.device)
        out, _ = self.lstm(x, (self.h0, self.c0))
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.randn(BATCH, SEQ, INPUT)]


def get_init_inputs():
    return [INPUT, HIDDEN, LAYERS, OUTPUT]
