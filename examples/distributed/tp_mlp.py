"""A tensor-parallel MLP block as rank 0 runs it (Megatron style): the first linear split by
columns, the second by rows, their partial sums all-reduced with a functional collective.

    solar analyze examples/distributed/tp_mlp.py --system 8xH100-SXM --world-size 8
    solar verify examples/distributed/tp_mlp.py --world-size 8

Without a process group the same file is the single-device original; SHARDS says how each rank's
weights are cut from the original's (verify runs every rank on the interpreter against it)."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN = 4096
FFN = 14336
TOKENS = 2048
# the dimension of each tensor split over the ranks (torch.nn.Linear keeps weights as [out, in])
SHARDS = {"up.weight": 0, "down.weight": 1}


class Model(torch.nn.Module):
    def __init__(self, hidden: int = HIDDEN, ffn: int = FFN) -> None:
        super().__init__()
        ranks = dist.get_world_size() if dist.is_initialized() else 1
        self.up = torch.nn.Linear(hidden, ffn // ranks, bias=False, dtype=torch.bfloat16)
        self.down = torch.nn.Linear(ffn // ranks, hidden, bias=False, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        partial = self.down(torch.nn.functional.gelu(self.up(x)))
        if dist.is_initialized() and dist.get_world_size() > 1:
            partial = funcol.all_reduce(partial, "sum", dist.group.WORLD)
        return x + partial


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_verify_init_inputs():  # sizes the interpreter runs in seconds
    return [32, 64]


def get_verify_inputs():
    return [torch.randn(8, 32, dtype=torch.bfloat16)]
