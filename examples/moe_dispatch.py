"""A mixture-of-experts layer that routes tokens the way many model files do: a router picks the
top-2 of 4 experts for each token, `torch.where(mask)` gives each expert its tokens, the expert runs
on those rows only, and `index_add_` scatters the weighted results back. How many tokens reach an
expert depends on the data."""

import torch
import torch.nn as nn
import torch.nn.functional as F

TOKENS = 512
HIDDEN = 256
FFN = 512
EXPERTS = 4
TOP_K = 2


class Expert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(HIDDEN, FFN, bias=False)
        self.down = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.up(x)))


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.router = nn.Linear(HIDDEN, EXPERTS, bias=False)
        self.experts = nn.ModuleList(Expert() for _ in range(EXPERTS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = F.softmax(self.router(x), dim=-1)
        top_w, top_i = torch.topk(weights, TOP_K, dim=-1)
        top_w = top_w / top_w.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            token, slot = torch.where(top_i == e)
            y = expert(x[token]) * top_w[token, slot, None]
            out.index_add_(0, token, y)
        return out


def get_inputs() -> list[torch.Tensor]:
    return [torch.randn(TOKENS, HIDDEN)]


def get_init_inputs() -> list:
    return []
