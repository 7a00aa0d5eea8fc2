"""A selective scan written as a Python loop, as reference implementations of state-space layers
write it: 128 steps at batch 1, each step a handful of small elementwise ops and a reduction over
the state (h = a_t * h + b_t * x_t; y_t = sum(h * c_t)). Every op is tiny: host dispatch binds."""

import torch
from torch import nn

BATCH = 1
STEPS = 128
CHANNELS = 1024
STATE = 16


class Model(nn.Module):
    def forward(self, x, a, b, c):
        h = torch.zeros(BATCH, CHANNELS, STATE, device=x.device, dtype=x.dtype)
        ys = []
        for t in range(STEPS):
            h = a[:, t] * h + b[:, t] * x[:, t, :, None]
            ys.append((h * c[:, t, None, :]).sum(-1))
        return torch.stack(ys, dim=1)


def get_inputs():
    x = torch.randn(BATCH, STEPS, CHANNELS)
    a = torch.rand(BATCH, STEPS, CHANNELS, STATE)
    b = torch.randn(BATCH, STEPS, CHANNELS, STATE)
    c = torch.randn(BATCH, STEPS, STATE)
    return [x, a, b, c]


def get_init_inputs():
    return []
