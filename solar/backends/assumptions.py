"""The assumptions every bound is computed under; printed with every report (DESIGN.md §6)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from solar.errors import UsageError


class Precision(str, Enum):
    """The tensor-core precision policy (docs/BOUNDS.md §2)."""

    EXACT = "exact"
    FASTEST = "fastest"

    def __str__(self) -> str:
        return self.value


class CacheState(str, Enum):
    """What L2 holds when the run starts (docs/BOUNDS.md §3)."""

    COLD = "cold"
    WARM = "warm"

    def __str__(self) -> str:
        return self.value


# A locked SM clock outside this range is a typo, not a GPU (datasheet clocks: ~200-3000 MHz).
CLOCK_MHZ_RANGE = (10.0, 10000.0)


def check_clock_mhz(clock_mhz: float | None) -> float | None:
    """A locked clock in MHz: a finite number in CLOCK_MHZ_RANGE (None: the boost clock)."""
    if clock_mhz is None:
        return None
    lo, hi = CLOCK_MHZ_RANGE
    try:
        value = float(clock_mhz)
    except (TypeError, ValueError):
        raise UsageError(f"clock {clock_mhz!r} is not a number; give the locked SM clock in MHz, e.g. 1410") from None
    if isinstance(clock_mhz, bool) or not (lo <= value <= hi):  # also rejects nan and inf
        raise UsageError(
            f"clock {clock_mhz!r} MHz is outside {lo:g}..{hi:g} MHz; give the locked SM clock in MHz, e.g. 1410"
        )
    return value


PRECISION_TEXT: dict[Precision, str] = {
    Precision.EXACT: "exact — fp32 contractions stay fp32 (SIMT) unless the framework lets that op use "
    "TF32 tensor cores; lower-precision dtypes may use a tensor-core path of equal or higher "
    "precision that represents their values exactly",
    Precision.FASTEST: "fastest — fp32 contractions may use the fastest of the TF32/BF16/FP16 tensor-core "
    "paths (as tolerance-based benchmarks allow)",
}
CACHE_TEXT: dict[CacheState, str] = {
    CacheState.COLD: "cold — L2 flushed before the run: every input/parameter element the program reads "
    "crosses DRAM once, every output element is written once (see `end`)",
    CacheState.WARM: "warm — a previous run may have left up to the L2 capacity of input/parameter bytes in "
    "L2; those reads are free (no sourced L2 bandwidth: L2-resident bytes are priced at zero), "
    "every other input byte crosses DRAM once, every output element is written once (see `end`)",
}


@dataclass(frozen=True, slots=True)
class Assumptions:
    """precision: Precision (or its name); cache: CacheState (or its name: warm = L2-resident
    inputs); clock_mhz: a
    locked SM clock (None = the spec's boost clock); count_launch: include the minimum kernel time;
    tf32_flags: the framework's TF32 flags as read by the frontend, for printing; writeback: the run
    ends when its last kernel does, so up to the L2 capacity of output bytes may still be dirty in
    the write-back L2 (True, the default: only max(0, |Y| − L2) of the output bytes must reach
    DRAM), or every output byte is in DRAM at the end (False)."""

    precision: Precision = Precision.EXACT
    cache: CacheState = CacheState.COLD
    clock_mhz: float | None = None
    count_launch: bool = True
    tf32_flags: tuple[tuple[str, bool], ...] = ()
    writeback: bool = True

    def __post_init__(self) -> None:
        # names as the CLI and the Python API give them ("fastest") become the enum members
        object.__setattr__(self, "precision", _member(Precision, self.precision, "precision policy"))
        object.__setattr__(self, "cache", _member(CacheState, self.cache, "cache state"))
        if self.clock_mhz is not None and not self.clock_mhz > 0:
            raise UsageError(f"clock_mhz must be a positive number of MHz, got {self.clock_mhz!r}")

    def describe(self) -> list[str]:
        """Human-readable lines, one per assumption."""
        lines = [f"precision: {PRECISION_TEXT[self.precision]}"]
        if self.tf32_flags:
            flags = ", ".join(f"{name}={value}" for name, value in self.tf32_flags)
            lines.append(f"TF32 flags read from the framework: {flags}")
        lines.append(f"cache: {CACHE_TEXT[self.cache]}")
        lines.append(
            "end: the run ends with its last kernel; output bytes up to the L2 capacity may still be "
            "dirty in the write-back L2, so only max(0, output bytes − L2) are charged as DRAM writes"
            if self.writeback
            else "end: every output byte has reached DRAM when the run ends"
        )
        if self.clock_mhz is None:
            lines.append("clock: datasheet boost clock; dense datasheet peaks (never sparse)")
        else:
            lines.append(
                f"clock: SM clock locked at {self.clock_mhz:g} MHz — compute rates scaled by "
                "clock / boost clock, DRAM bandwidth unchanged; dense datasheet peaks"
            )
        lines.append(
            "launch: every kernel takes at least the spec's minimum kernel time"
            if self.count_launch
            else "launch: kernel launch time not counted"
        )
        return lines


def _member(kind: type[Enum], value: object, what: str) -> Enum:
    try:
        return kind(value)
    except ValueError:
        names = sorted(m.value for m in kind)
        raise UsageError(f"unknown {what} {value!r}; use one of {names}") from None
