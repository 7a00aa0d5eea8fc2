"""A three-layer perceptron: Linear -> ReLU -> Linear -> ReLU -> Linear.
Level 3: a small network of GEMMs with elementwise activations between them."""

import torch
import torch.nn as nn

BATCH = 128
INPUT_SIZE = 1024
HIDDEN_1 = 4096
HIDDEN_2 = 2048
OUTPUT_SIZE = 1024


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_sizes: list[int], output_size: int):
        super().__init__()
        layers = []
        width = input_size
        for hidden in hidden_sizes:
            layers.append(nn.Linear(width, hidden))
            layers.append(nn.ReLU())
            width = hidden
        layers.append(nn.Linear(width, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, INPUT_SIZE)]


def get_init_inputs():
    return [INPUT_SIZE, [HIDDEN_1, HIDDEN_2], OUTPUT_SIZE]
