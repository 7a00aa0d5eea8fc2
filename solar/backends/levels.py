"""The bound levels: one enum and one table of what each level claims (the executions it bounds,
whether it is a speed-of-light level, where docs/BOUNDS.md derives it), and the two questions every
consumer asks of a measurement: did it beat a bound that claims it (`violations`), and how far is it
from a bound (`headroom`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum


class Level(str, Enum):
    """A bound level; its value is the name reports and JSON use."""

    FUSED = "fused"
    CACHE_AWARE = "cache_aware"
    LIBRARY = "library"
    UNFUSED = "unfused"
    RECURRENCE = "recurrence"
    EAGER_HOST = "eager_host"
    GRAPHED = "graphed"

    def __str__(self) -> str:
        return self.value


# Executions a measurement can be of: eager PyTorch (one kernel per op, dispatched by the host),
# torch.compile, and a CUDA-graph replay of the eager program's kernels (captured from one eager
# run: the same kernels in stream order, no host dispatch); measured variants of other names (a
# hand-written kernel) are "any" execution.
EAGER = "eager"
COMPILE = "compile"
GRAPHED = "graphed"
EXECUTIONS = (EAGER, COMPILE, GRAPHED)  # the order reports show them in


@dataclass(frozen=True, slots=True)
class LevelFacts:
    """bounds: the executions the level claims to bound (None: every implementation);
    sol: a speed-of-light level, a max over whole-program resources that bounds every implementation
    (what `provision` inverts, what benchmarks score against); calibrated: its floors come from
    measurements of a host or device (not reproducible from the spec alone); section: where
    docs/BOUNDS.md derives it; title: its column heading in tables."""

    bounds: frozenset[str] | None
    sol: bool
    calibrated: bool
    section: str
    title: str


# Insertion order is report order.
LEVELS: dict[Level, LevelFacts] = {
    Level.FUSED: LevelFacts(None, sol=True, calibrated=False, section="§5", title="fused (SOL)"),
    Level.CACHE_AWARE: LevelFacts(None, sol=True, calibrated=False, section="§10", title="cache-aware"),
    # library kernels (cuBLAS/cuDNN/SDPA boundaries): eager and torch.compile, not a hand-fused kernel
    Level.LIBRARY: LevelFacts(frozenset(EXECUTIONS), sol=False, calibrated=False, section="§15", title="library"),
    Level.UNFUSED: LevelFacts(frozenset({EAGER}), sol=False, calibrated=False, section="§6", title="unfused (eager)"),
    Level.RECURRENCE: LevelFacts(None, sol=False, calibrated=True, section="§18", title="recurrence"),
    # valid on the host and framework whose dispatch floors it was computed with
    Level.EAGER_HOST: LevelFacts(frozenset({EAGER}), sol=False, calibrated=True, section="§17", title="eager_host"),
    # the eager kernels replayed from a CUDA graph: each pays at least the in-graph kernel interval
    Level.GRAPHED: LevelFacts(frozenset({GRAPHED}), sol=False, calibrated=True, section="§20", title="graphed"),
}
SOL_LEVELS: tuple[Level, ...] = tuple(lv for lv, f in LEVELS.items() if f.sol)
SPEC_LEVELS: tuple[Level, ...] = tuple(lv for lv, f in LEVELS.items() if not f.calibrated)


def title(name: str | Level) -> str:
    """A level's column heading (an unknown name is its own)."""
    lv = level_of(name)
    return str(name) if lv is None else LEVELS[lv].title


def level_of(name: str | Level) -> Level | None:
    """The Level a name (from a report, a JSON row) means; None for a name solar does not know."""
    try:
        return Level(name)
    except ValueError:
        return None


def claims(level: str | Level, execution: str) -> bool:
    """Whether a bound of `level` claims to bound a measured run of `execution` (an unknown level
    claims nothing)."""
    lv = level_of(level)
    if lv is None:
        return False
    only = LEVELS[lv].bounds
    return only is None or execution in only


def ordered(names: Iterable[str | Level]) -> tuple[str, ...]:
    """The level names in report order; names solar does not know follow alphabetically."""
    names = set(map(str, names))
    known = tuple(lv.value for lv in LEVELS if lv.value in names)
    return known + tuple(sorted(names - set(known)))


@dataclass(frozen=True, slots=True)
class Violation:
    """A measured run (its fastest time) below a bound that claims to bound that execution: a bug
    in solar's bound model, never something to tune away."""

    level: str
    execution: str
    bound_seconds: float
    measured_seconds: float

    @property
    def ratio(self) -> float:
        return self.measured_seconds / self.bound_seconds

    def describe(self) -> str:
        return (
            f"{self.execution} ran in {self.measured_seconds * 1e6:.2f} µs, below the {self.level} "
            f"bound of {self.bound_seconds * 1e6:.2f} µs"
        )


def violations(bounds: Mapping[str, float], measured: Mapping[str, float]) -> list[Violation]:
    """Every (level, execution) where the fastest measured run (`measured`: execution -> seconds)
    is below a bound (`bounds`: level -> seconds) that claims that execution; levels in report
    order, executions in the order given."""
    return [
        Violation(level, execution, bounds[level], seconds)
        for level in ordered(bounds)
        for execution, seconds in measured.items()
        if claims(level, execution) and seconds < bounds[level]
    ]


def headroom(measured_seconds: float | None, bound_seconds: float | None) -> float | None:
    """measured / bound: how many times slower than the bound the run is (< 1: a violation, if the
    level claims the run); None when either is missing or the bound is 0."""
    if measured_seconds is None or not bound_seconds:
        return None
    return measured_seconds / bound_seconds
