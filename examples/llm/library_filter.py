"""A program calling a library that breaks export: scipy.signal.lfilter, a first-order IIR filter
y[t] = x[t] + a * y[t-1] along time for every channel. It is a recurrence: its IR needs the in-order
loop (`for t in 0..T in order:`), one step after the other."""

import numpy as np
import scipy.signal
import torch
from torch import nn

CHANNELS = 8
STEPS = 64
DECAY = 0.9


class Model(nn.Module):
    def __init__(self, decay: float):
        super().__init__()
        self.decay = decay

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (channels, steps)
        y = scipy.signal.lfilter([1.0], [1.0, -self.decay], x.numpy(), axis=1)
        return torch.from_numpy(np.ascontiguousarray(y, dtype=np.float32))


def get_inputs():
    return [torch.randn(CHANNELS, STEPS)]


def get_init_inputs():
    return [DECAY]
