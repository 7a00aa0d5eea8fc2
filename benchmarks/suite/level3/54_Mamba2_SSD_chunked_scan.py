"""Mamba-2 selective state-space scan in its chunked (SSD) form, returning Y (as in KernelBench's
Mamba2ReturnY): within a chunk a masked, decayed attention-like product (exp of segment sums,
masked above the diagonal with -inf via a tril mask), across chunks a recurrence on states.
Level 3: cumsum scans; the tril mask becomes guards, exp(-inf) = 0 propagates, so the intra-chunk
products count only s <= l."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
CHUNKS = 2
BLOCK_LEN = 64
SEQ = CHUNKS * BLOCK_LEN
HEADS = 8
HEAD_DIM = 64
D_STATE = 16


class Model(nn.Module):
    def __init__(self, batch: int, seq: int, heads: int, d_state: int, block_len: int):
        super().__init__()
        self.block_len = block_len
        self.A = nn.Parameter(torch.randn(batch, seq, heads) * 0.1)
        self.B = nn.Parameter(torch.randn(batch, seq, heads, d_state))
        self.C = nn.Parameter(torch.randn(batch, seq, heads, d_state))

    @staticmethod
    def segsum(x: torch.Tensor) -> torch.Tensor:
        """x[..., i] - x[..., j] summed over (j, i], -inf above the diagonal."""
        t = x.size(-1)
        x_cumsum = torch.cumsum(x, dim=-1)
        x_segsum = x_cumsum[..., :, None] - x_cumsum[..., None, :]
        mask = torch.tril(torch.ones(t, t, device=x.device, dtype=torch.bool), diagonal=0)
        return x_segsum.masked_fill(mask.logical_not(), -torch.inf)

    def chunks(self, x: torch.Tensor) -> torch.Tensor:
        b, s = x.shape[:2]
        return x.reshape(b, s // self.block_len, self.block_len, *x.shape[2:])

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        x, a, bm, cm = (self.chunks(t) for t in (X, self.A, self.B, self.C))  # b c l h [n|p]
        a = a.permute(0, 3, 1, 2)  # b h c l
        a_cumsum = torch.cumsum(a, dim=-1)
        decay = torch.exp(self.segsum(a))  # b h c l s
        # 1. diagonal blocks: Y_diag[b,c,l,h,p] = sum_s (C_l . B_s) decay[l,s] X_s
        scores = torch.einsum("bclhn,bcshn->bhcls", cm, bm) * decay
        y_diag = torch.einsum("bhcls,bcshp->bclhp", scores, x)
        # 2. states at the end of each chunk
        decay_states = torch.exp(a_cumsum[:, :, :, -1:] - a_cumsum)  # b h c l
        weighted = bm * decay_states.permute(0, 2, 3, 1)[..., None]
        states = torch.einsum("bclhn,bclhp->bchpn", weighted, x)
        # 3. recurrence across chunks
        states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
        decay_chunk = torch.exp(self.segsum(F.pad(a_cumsum[:, :, :, -1], (1, 0))))  # b h z c
        states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)[:, :-1]
        # 4. state -> output per chunk
        y_off = torch.einsum("bclhn,bchpn->bclhp", cm, states)
        y_off = y_off * torch.exp(a_cumsum).permute(0, 2, 3, 1)[..., None]
        y = y_diag + y_off
        return y.reshape(y.shape[0], -1, *y.shape[3:])


def get_inputs():
    return [torch.randn(BATCH, SEQ, HEADS, HEAD_DIM)]


def get_init_inputs():
    return [BATCH, SEQ, HEADS, D_STATE, BLOCK_LEN]
