"""One step of a hand-written Elman RNN (as in KernelBench's vanilla RNN problem): the hidden
state is a plain tensor attribute made in __init__, concatenated with the input, projected,
squashed with tanh and stored back; an output head reads it.
Level 3: the concat is an index map (no copy), two dense contractions."""

import torch
import torch.nn as nn

BATCH = 8
INPUT = 1024
HIDDEN = 256
OUTPUT = 128


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.hidden = torch.randn((BATCH, hidden_size))
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.hidden = self.hidden.to(x.device)
        combined = torch.cat((x, self.hidden), dim=1)
        self.hidden = self.tanh(self.i2h(combined))
        return self.h2o(self.hidden)


def get_inputs():
    return [torch.randn(BATCH, INPUT)]


def get_init_inputs():
    return [INPUT, HIDDEN, OUTPUT]
