"""A two-stage pipeline of MLP blocks as every rank runs it (SPMD): rank s holds stage s's weights;
at each of the M + 1 ticks a rank applies its stage to its input (stage 0: the next micro-batch,
stage 1: what stage 0 sent at the tick before) and sends the result around the ring
(funcol.permute_tensor, a send/recv by one rank), so stage 0 receives stage 1's result of the
micro-batch before. Each rank computes M + 1 blocks for M micro-batches: the bubble is work too.

    solar analyze examples/distributed/pp_two_stage.py --system 8xH100-SXM --world-size 2
    solar verify examples/distributed/pp_two_stage.py --world-size 2

Without a process group the same file is the single-device original: both stages in turn on each
micro-batch. Which rank is stage 0 is data (`first_stage`, 1 on stage 0), since every rank runs
the program rank 0 runs."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

STAGES = 2
MICROBATCHES = 4
TOKENS = 4096  # per micro-batch
HIDDEN = 8192
FFN = 28672
# stage s's weights are block s of the stacked ones; the result is held whole by rank 0 (stage 0
# receives it from the last stage)
SHARDS = {"up": 0, "down": 0, "first_stage": 0, "out0": "rank 0"}


def _ranks() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


class Model(torch.nn.Module):
    def __init__(self, hidden: int = HIDDEN, ffn: int = FFN) -> None:
        super().__init__()
        mine = STAGES // _ranks()  # the stages this rank holds: all of them on one device
        self.up = torch.nn.Parameter(torch.randn(mine, hidden, ffn, dtype=torch.bfloat16) * hidden**-0.5)
        self.down = torch.nn.Parameter(torch.randn(mine, ffn, hidden, dtype=torch.bfloat16) * ffn**-0.5)

    def block(self, x: torch.Tensor, s: int) -> torch.Tensor:
        return x + torch.nn.functional.gelu(x @ self.up[s]) @ self.down[s]

    def forward(self, x: torch.Tensor, first_stage: torch.Tensor) -> torch.Tensor:
        if _ranks() == 1:
            out = x
            for s in range(STAGES):
                out = torch.stack([self.block(out[m], s) for m in range(out.shape[0])])
            return out
        first = first_stage.to(x.dtype)
        received = torch.zeros_like(x[0])
        results = []
        for tick in range(x.shape[0] + 1):
            fresh = x[tick] if tick < x.shape[0] else torch.zeros_like(x[0])
            h = self.block(first * fresh + (1 - first) * received, 0)
            # permute_tensor splits its buffer by elements along dimension 0: send it flat
            ring = [(r + 1) % STAGES for r in range(STAGES)]
            received = funcol.permute_tensor(h.flatten(), ring, dist.group.WORLD).view_as(h)
            if tick > 0:
                results.append(received)
        return torch.stack(results)


def get_inputs():
    first_stage = torch.zeros(STAGES // _ranks())
    first_stage[0] = 1
    return [torch.randn(MICROBATCHES, TOKENS, HIDDEN, dtype=torch.bfloat16), first_stage]


def get_init_inputs():
    return []


def get_verify_init_inputs():  # sizes the interpreter runs in seconds
    return [16, 32]


def get_verify_inputs():
    return [torch.randn(MICROBATCHES, 4, 16, dtype=torch.bfloat16), get_inputs()[1]]
