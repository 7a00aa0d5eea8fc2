"""The graphed bound (docs/BOUNDS.md §20): the eager program's kernels replayed from a CUDA graph. No
host dispatch; the kernels run one after another in stream order, and a dependent kernel in a graph
starts no sooner than the in-graph kernel interval f after the one before it:

    graphed = max(unfused, Σ_i max(d_i, f) − max_i (max(d_i, f) − d_i))

over the op instances that run a kernel (d_i: the instance's unfused bound, §6; the last kernel in
the replay pays only its own d_i, and the one whose floor adds most is taken as the last)."""

from __future__ import annotations

from dataclasses import dataclass

from solar.backends.bounds import Analysis, Bound
from solar.backends.levels import Level

# The floor is this fraction of the least in-graph kernel interval measured on the GPU model.
GRAPH_MARGIN = 0.9


@dataclass(frozen=True, slots=True)
class Graphed:
    bound: Bound
    kernels: int  # op instances that run a kernel
    floor_seconds: float  # f
    added_seconds: float  # what the in-graph interval adds over the kernels' own floors
    source: str

    def describe(self) -> str:
        apart = (
            f"each at least {self.floor_seconds * 1e6:.3f} us after the one before ({self.source})" if self.floor_seconds
            else f"each at least its own floor ({self.source})"
        )
        return (
            f"graphed: {self.kernels} kernels replayed from a CUDA graph in stream order, {apart}; bounds a "
            "CUDA-graph replay of the eager kernels (not torch.compile's own kernels)"
        )


def graphed_bound(analysis: Analysis, floor_seconds: float, source: str) -> Graphed | None:
    """The graphed level of `analysis`'s program with in-graph kernel floor `floor_seconds`; None
    where the program runs no kernel."""
    kernels = [op for op in analysis.ops if op.launch_seconds > 0]
    if not kernels:
        return None
    excess = [max(op.seconds, floor_seconds) - op.seconds for op in kernels]
    added = sum(excess) - max(excess)
    floored = sum(floor_seconds for op in kernels if op.seconds <= floor_seconds)  # kernels the floor sets
    u = analysis.unfused
    seconds = max(u.seconds, sum(op.seconds for op in analysis.ops) + added)
    bound = Bound(
        level=Level.GRAPHED,
        seconds=seconds,
        bottleneck="launch" if 2 * floored >= seconds else u.bottleneck,
        compute_seconds=u.compute_seconds,
        memory_seconds=u.memory_seconds,
        launch_seconds=u.launch_seconds + added,
        binding_unit=u.binding_unit,
    )
    return Graphed(bound, len(kernels), floor_seconds, added, source)
