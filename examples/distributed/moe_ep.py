"""An expert-parallel mixture-of-experts layer as rank 0 runs it: each rank holds EXPERTS / ranks
experts; the router is expert choice (each expert takes its CAPACITY best tokens, so every expert
gets exactly CAPACITY rows: static shapes, balanced by construction); the chosen rows go to the
experts' ranks with one all-to-all and come back with another, then are summed into their tokens
weighted by the router's scores. Without a process group the same file is the single-device
original (every expert on one GPU); SHARDS cuts the experts' weights by rank, and every rank routes
the same tokens, so each rank's output is the original's.

    solar analyze examples/distributed/moe_ep.py --system 8xH100-SXM --world-size 8
    solar verify examples/distributed/moe_ep.py --world-size 8"""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

HIDDEN = 4096
FFN = 14336
EXPERTS = 8
TOKENS = 4096
TOP_K = 2  # rows per token on average: CAPACITY = TOKENS * TOP_K / EXPERTS
CAPACITY = TOKENS * TOP_K // EXPERTS
SHARDS = {"w_gate": 0, "w_up": 0, "w_down": 0}


class Model(torch.nn.Module):
    def __init__(self, hidden: int = HIDDEN, ffn: int = FFN, experts: int = EXPERTS) -> None:
        super().__init__()
        self.ranks = dist.get_world_size() if dist.is_initialized() else 1
        local = experts // self.ranks
        self.router = torch.nn.Linear(hidden, experts, bias=False, dtype=torch.bfloat16)
        scale = hidden**-0.5
        self.w_gate = torch.nn.Parameter(torch.randn(local, hidden, ffn, dtype=torch.bfloat16) * scale)
        self.w_up = torch.nn.Parameter(torch.randn(local, hidden, ffn, dtype=torch.bfloat16) * scale)
        self.w_down = torch.nn.Parameter(torch.randn(local, ffn, hidden, dtype=torch.bfloat16) * ffn**-0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        capacity = x.shape[0] * TOP_K // self.router.out_features  # CAPACITY at the file's sizes
        scores = torch.softmax(self.router(x).float(), dim=-1)  # [tokens, experts]
        weight, chosen = torch.topk(scores.t(), capacity, dim=-1)  # each expert's CAPACITY tokens
        rows = x[chosen.reshape(-1)]  # [experts * CAPACITY, hidden], expert by expert
        if self.ranks > 1:  # chunk r (the experts of rank r) goes to rank r
            rows = funcol.all_to_all_single(rows, None, None, dist.group.WORLD)
        local = self.w_gate.shape[0]
        # [ranks (sources), local experts, CAPACITY, hidden] -> per local expert, every source's rows
        rows = rows.view(self.ranks, local, capacity, hidden).transpose(0, 1).reshape(local, -1, hidden)
        h = torch.nn.functional.silu(torch.bmm(rows, self.w_gate)) * torch.bmm(rows, self.w_up)
        out = torch.bmm(h, self.w_down)  # [local, ranks * CAPACITY, hidden]
        out = out.view(local, self.ranks, capacity, hidden).transpose(0, 1).reshape(-1, hidden)
        if self.ranks > 1:  # the results go back to the ranks whose tokens they are
            out = funcol.all_to_all_single(out.contiguous(), None, None, dist.group.WORLD)
        out = out * weight.reshape(-1, 1).to(out.dtype)
        return x.index_add(0, chosen.reshape(-1), out)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_verify_init_inputs():  # sizes the interpreter runs in seconds
    return [16, 32, EXPERTS]


def get_verify_inputs():
    return [torch.randn(32, 16, dtype=torch.bfloat16)]
