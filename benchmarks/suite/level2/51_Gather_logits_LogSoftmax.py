"""Log-probabilities of chosen tokens: a linear head, log_softmax over the vocabulary, then
torch.gather of each position's target token (the per-token log-likelihood of language models).
Level 2: a dense contraction, a row reduction and a data-dependent gather."""

import torch
import torch.nn as nn

TOKENS = 4096
DIM = 1024
VOCAB = 8192


class Model(nn.Module):
    def __init__(self, dim: int, vocab: int):
        super().__init__()
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logp = torch.log_softmax(self.head(x), dim=-1)
        return torch.gather(logp, 1, targets[:, None]).squeeze(1)


def get_inputs():
    return [torch.randn(TOKENS, DIM), torch.randint(0, VOCAB, (TOKENS,))]


def get_init_inputs():
    return [DIM, VOCAB]
