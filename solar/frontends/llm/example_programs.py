"""Small PyTorch programs whose lowerings by solar's own torch frontend are the worked examples of
the prompt (source -> IR pairs). Each is traced at distinct small sizes, and sizes equal to one of
the named constants become that symbol in the IR shown. Plain code: its source is read with
`inspect`, never generated or executed from text."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class LinearRelu(nn.Module):
    """y = relu(x @ W^T + b)"""

    def __init__(self, features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


class Softmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


class ScaledTranspose(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.transpose(0, 1) * torch.sigmoid(y)


class CumulativeSum(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


class Lookup(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


class MaxPool(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool1d(x, kernel_size=2, stride=2)


class CausalMaskedSum(nn.Module):
    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        n = scores.shape[-1]
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        return scores.masked_fill(~mask, 0.0).sum(dim=-1)


class Where(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, x, 0.1 * x).amax(dim=0)


# What an example's IR shows that its source does not say (appended to the source as a comment).
NOTES = {
    "CumulativeSum": "a trip count that is no tensor dimension (here T - 1 = 4) cannot be a symbol: "
    "over symbols, loop to T and guard the body, `for s in 0..T in order {` ... `where s >= 1` "
    "reading cumsum[i0, s - 1]",
}

# (module class, constructor arguments, input shapes and dtypes, size names by value)
EXAMPLES = (
    (LinearRelu, (5, 7), (((3, 5), torch.float32),), {3: "B", 5: "F", 7: "O"}),
    (Softmax, (), (((3, 5), torch.float32),), {3: "R", 5: "C"}),
    (ScaledTranspose, (), (((3, 5), torch.float32), ((5, 3), torch.float32)), {3: "M", 5: "N"}),
    (CumulativeSum, (), (((3, 5), torch.float32),), {3: "B", 5: "T"}),
    (Lookup, (11, 5), (((3,), torch.int64),), {11: "V", 5: "D", 3: "B"}),
    (MaxPool, (), (((3, 4, 12), torch.float32),), {3: "B", 4: "C", 12: "L", 6: "P"}),
    (CausalMaskedSum, (), (((3, 5, 5), torch.float32),), {3: "B", 5: "S"}),
    (Where, (), (((3, 5), torch.float32),), {3: "R", 5: "C"}),
)
