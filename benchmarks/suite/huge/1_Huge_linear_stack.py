"""A deep stack of 32768 x 32768 Linear + ReLU layers: about 51.5 GB (48 GiB) of fp32 parameters.
Huge: solar must analyse this with fake tensors and never allocate it (input: a 64 x 32768 batch)."""

# WARNING: do NOT build this model or call get_inputs() for real. Twelve 32768 x 32768 fp32 weight
# matrices take 12 * 32768**2 * 4 bytes = 51.5 GB. It exists to check that analysis runs on fake
# tensors (torch._subclasses.fake_tensor.FakeTensorMode) in seconds and a little memory. Build it only
# inside such a mode, e.g.
#     with FakeTensorMode():
#         model = Model(*get_init_inputs()); out = model(*get_inputs())

import torch
import torch.nn as nn

BATCH = 64
DIM = 32768
NUM_LAYERS = 12


class Model(nn.Module):
    def __init__(self, dim: int, num_layers: int):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM, NUM_LAYERS]
