# case: from __future__ import annotations and a dataclass config
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
from __future__ import annotations

import dataclasses

import torch
import torch.nn as nn
@dataclasses.dataclass
class Config:
    width: int = 8

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(Config().width, 8)

    def forward(self, x):
        return self.l(x)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
