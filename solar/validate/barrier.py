"""A grid-wide barrier as a persistent Triton kernel (imported only on a GPU machine with Triton):
one program per SM. Built from scalar atomics only: a flag-array form (each program stores its step
in its own flag and spins on a min-reduction of volatile loads of all flags) does not compile on
Triton 3.6 (an assertion in its layout pass). The spin is capped (`stuck` records the longest
spin), so a GPU that cannot hold every program at once ends instead of hanging."""

import triton
import triton.language as tl


@triton.jit
def counter_barrier(count, steps, cap, stuck, N: tl.constexpr):
    """Each program adds 1 to one counter per step, then spins on atomic reads of it until all N
    programs of that step have arrived."""
    for s in range(steps):
        tl.atomic_add(count, 1)
        target = (s + 1) * N
        c = tl.atomic_add(count, 0)
        spins = 0
        while (c < target) & (spins < cap):
            c = tl.atomic_add(count, 0)
            spins += 1
        tl.atomic_max(stuck, spins)
