"""A 3-layer MLP (GELU) trained with AdamW: `solar analyze examples/train/mlp.py --train`."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in: int = 1024, hidden: int = 4096, d_out: int = 1024) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, d_out)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.randn(8192, 1024)]


def get_init_inputs():
    return []
