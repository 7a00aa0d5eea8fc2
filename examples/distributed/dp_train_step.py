"""A data-parallel training step of an MLP as rank 0 runs it: forward and backward on its share of
the batch, the gradients all-reduced in one bucket (as DistributedDataParallel buckets them) and
averaged, then an SGD update; the loss is averaged over the ranks too. The backward is written out
(the gradients of x @ w1, tanh, @ w2 and the mean squared error) so the gradient all-reduce is a
collective of the traced program.

    solar analyze examples/distributed/dp_train_step.py --system 8xH100-SXM --world-size 8
    solar verify examples/distributed/dp_train_step.py --world-size 8

Without a process group the same file is the single-device original: the whole batch on one
device, the same updated weights."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

TOKENS = 32768  # the global batch, split over the ranks
HIDDEN = 4096
FFN = 16384
LR = 1e-2
# the batch is split over the ranks; the weights and the results are the same on every rank
SHARDS = {"x": 0, "target": 0}


def _ranks() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


class Model(torch.nn.Module):
    def __init__(self, hidden: int = HIDDEN, ffn: int = FFN, dtype: torch.dtype = torch.bfloat16, lr: float = LR) -> None:
        super().__init__()
        self.lr = lr
        self.w1 = torch.nn.Parameter(torch.randn(hidden, ffn, dtype=dtype) * hidden**-0.5)
        self.w2 = torch.nn.Parameter(torch.randn(ffn, hidden, dtype=dtype) * ffn**-0.5)

    def forward(self, x: torch.Tensor, target: torch.Tensor):
        a = torch.tanh(x @ self.w1)
        err = a @ self.w2 - target
        loss = (err * err).mean()
        g_out = err * (2.0 / err.numel())
        g_w2 = a.t() @ g_out
        g_h = (g_out @ self.w2.t()) * (1 - a * a)
        g_w1 = x.t() @ g_h
        bucket = torch.cat([g_w1.flatten(), g_w2.flatten(), loss.reshape(1).to(g_w1.dtype)])
        if _ranks() > 1:
            bucket = funcol.all_reduce(bucket, "sum", dist.group.WORLD) / _ranks()
        n1, n2 = g_w1.numel(), g_w2.numel()
        w1 = self.w1 - self.lr * bucket[:n1].view_as(self.w1)
        w2 = self.w2 - self.lr * bucket[n1 : n1 + n2].view_as(self.w2)
        return bucket[n1 + n2], w1, w2


def get_inputs():
    tokens = TOKENS // _ranks()
    return [torch.randn(tokens, HIDDEN, dtype=torch.bfloat16), torch.randn(tokens, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_verify_init_inputs():  # sizes the interpreter runs in seconds, in float32, a step that moves the weights
    return [16, 32, torch.float32, 1.0]


def get_verify_inputs():
    tokens = 64 // _ranks()
    return [torch.randn(tokens, 16), torch.randn(tokens, 16)]
