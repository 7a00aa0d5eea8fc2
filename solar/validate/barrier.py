"""Grid-wide barriers as persistent Triton kernels (imported only on a GPU machine with Triton):
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


@triton.jit
def counter_barrier(count, steps, cap, stuck, N: tl.constexpr):
    """The same barrier from scalar atomics only (no reduction: the form above did not compile on
    Triton 3.6): each program adds 1 to one counter per step, then spins on atomic reads of it
    until all N programs of that step have arrived."""
    for s in range(steps):
        tl.atomic_add(count, 1)
        target = (s + 1) * N
        c = tl.atomic_add(count, 0)
        spins = 0
        while (c < target) & (spins < cap):
            c = tl.atomic_add(count, 0)
            spins += 1
        tl.atomic_max(stuck, spins)
