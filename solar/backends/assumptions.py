"""The assumptions every bound is computed under; printed with every report (DESIGN.md §6)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from solar.errors import UsageError

Precision = Literal["exact", "fastest"]
CacheState = Literal["cold", "warm"]

PRECISION_TEXT: dict[str, str] = {
    "exact": "exact — fp32 contractions stay fp32 (SIMT) unless the framework lets that op use "
    "TF32 tensor cores; lower-precision dtypes may use a tensor-core path of equal or higher "
    "precision that represents their values exactly",
    "fastest": "fastest — fp32 contractions may use the fastest of the TF32/BF16/FP16 tensor-core "
    "paths (as tolerance-based benchmarks allow)",
}
CACHE_TEXT: dict[str, str] = {
    "cold": "cold — L2 flushed before the run: every input/parameter element the program reads "
    "crosses DRAM once, every output element is written once (see `end`)",
    "warm": "warm — a previous run may have left up to the L2 capacity of input/parameter bytes in "
    "L2; those reads are free (no sourced L2 bandwidth: L2-resident bytes are priced at zero), "
    "every other input byte crosses DRAM once, every output element is written once (see `end`)",
}


@dataclass(frozen=True, slots=True)
class Assumptions:
    """precision: "exact" | "fastest"; cache: "cold" | "warm" (L2-resident inputs); clock_mhz: a
    locked SM clock (None = the spec's boost clock); count_launch: include the minimum kernel time;
    tf32_flags: the framework's TF32 flags as read by the frontend, for printing; writeback: the run
    ends when its last kernel does, so up to the L2 capacity of output bytes may still be dirty in
    the write-back L2 (True, the default: only max(0, |Y| − L2) of the output bytes must reach
    DRAM), or every output byte is in DRAM at the end (False)."""

    precision: Precision = "exact"
    cache: CacheState = "cold"
    clock_mhz: float | None = None
    count_launch: bool = True
    tf32_flags: tuple[tuple[str, bool], ...] = ()
    writeback: bool = True

    def __post_init__(self) -> None:
        if self.precision not in PRECISION_TEXT:
            raise UsageError(
                f"unknown precision policy {self.precision!r}; use one of {sorted(PRECISION_TEXT)}"
            )
        if self.cache not in CACHE_TEXT:
            raise UsageError(f"unknown cache state {self.cache!r}; use one of {sorted(CACHE_TEXT)}")
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
