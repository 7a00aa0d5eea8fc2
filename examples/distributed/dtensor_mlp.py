"""A tensor-parallel MLP block with DTensor: the single-device module, parallelized with
parallelize_module on a device mesh of the process group's ranks (up column-wise, down row-wise:
torch's Megatron styles); solar traces the local program DTensor runs on each rank, its
all-reduce a functional collective.

    solar analyze examples/distributed/dtensor_mlp.py --system 8xH100-SXM --world-size 8
    solar verify examples/distributed/dtensor_mlp.py --world-size 8

Without a process group the module is not parallelized: the single-device original. verify cuts
each rank's weights from the original's as their DTensor placements say."""

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

HIDDEN = 4096
FFN = 14336
TOKENS = 2048


class Model(torch.nn.Module):
    def __init__(self, hidden: int = HIDDEN, ffn: int = FFN) -> None:
        super().__init__()
        self.up = torch.nn.Linear(hidden, ffn, bias=False, dtype=torch.bfloat16)
        self.down = torch.nn.Linear(ffn, hidden, bias=False, dtype=torch.bfloat16)
        if dist.is_initialized() and dist.get_world_size() > 1:
            device = "cuda" if torch.cuda.is_available() else "cpu"
            mesh = init_device_mesh(device, (dist.get_world_size(),))
            # src_data_rank=None: each rank keeps its own shard as built, nothing scattered from rank 0
            plan = {"up": ColwiseParallel(), "down": RowwiseParallel()}
            parallelize_module(self, mesh, plan, src_data_rank=None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.gelu(self.up(x)))


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_verify_init_inputs():  # sizes the interpreter runs in seconds
    return [32, 64]


def get_verify_inputs():
    return [torch.randn(8, 32, dtype=torch.bfloat16)]
