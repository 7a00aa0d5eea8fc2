"""A 3-layer MLP (GELU) trained with AdamW: `solar analyze examples/train/mlp.py --train`."""

import torch
import torch.nn as nn

BATCH = 8192
D_IN = 1024
HIDDEN = 4096
D_OUT = 1024


class Model(nn.Module):
    def __init__(self, d_in: int = D_IN, hidden: int = HIDDEN, d_out: int = D_OUT) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, d_out)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.randn(BATCH, D_IN)]


def get_init_inputs():
    return []
