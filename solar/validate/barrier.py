"""A grid-wide barrier as a persistent Triton kernel (imported only on a GPU machine with Triton):
one program per SM stores its step number in its own flag, then spins on volatile loads until every
flag has reached it. The spin is capped (`stuck` records the longest spin), so a GPU that cannot
hold every program at once ends instead of hanging."""

import triton
import triton.language as tl


@triton.jit
def barrier_kernel(flags, steps, cap, stuck, NP: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, NP)
    for s in range(steps):
        tl.store(flags + pid, s + 1)
        f = tl.load(flags + offs, mask=offs < N, other=1 << 30, volatile=True)
        spins = 0
        while (tl.min(f, axis=0) < s + 1) & (spins < cap):
            f = tl.load(flags + offs, mask=offs < N, other=1 << 30, volatile=True)
            spins += 1
        tl.atomic_max(stuck, spins)
