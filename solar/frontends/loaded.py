"""A loaded program: the IR a frontend produced and what the frontend recorded beside it (framework
flags, source file, the traced record, where each part of the IR came from, an hf: serving step)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from solar.ir.nodes import Program
from solar.lift import EinsumGraph, lift

if TYPE_CHECKING:
    from solar.frontends.torch.eager import EagerCall
    from solar.frontends.torch.hf import Built

Flags = tuple[tuple[str, bool], ...]  # framework flags as (name, value), e.g. TF32 switches


class TracedRecord(Protocol):
    """What a tracer recorded (solar.frontends.torch.loader.Traced, a stitched trace, a training
    step, solar.frontends.jax.loader.JaxTraced): its framework flags and source file."""

    @property
    def flags(self) -> Flags: ...

    @property
    def source_file(self) -> str | None: ...


@dataclass(frozen=True)
class Provenance:
    """Where one part of a program's IR came from, for reports."""

    part: str  # "whole program" or the op
    source: str  # "traced" | "llm" | "ir" (read from IR text)
    model: str = ""
    attempts: int = 0
    requests: int = 0
    max_error: float = 0.0
    shapes: tuple[str, ...] = ()
    cached: bool = False
    seconds: float = 0.0

    def describe(self) -> str:
        if self.source == "traced":
            return f"IR of {self.part}: traced"
        if self.source == "ir":
            return f"IR of {self.part}: read from IR text"
        how = (
            "from the cache, re-verified"
            if self.cached
            else f"{self.attempts} attempt(s), {self.requests} request(s)"
        )
        return (
            f"IR of {self.part}: written by LLM {self.model} ({how}); matched the original with max "
            f"relative error {self.max_error:.2g} at {'; '.join(self.shapes)}"
        )


@dataclass(frozen=True)
class Serving:
    """An hf: serving step: the built step, the Loaded programs of the step with n and n + 1
    decoder layers whose difference is the per-layer bound, and the report line saying which."""

    built: Built
    parts: tuple[Loaded, Loaded]
    line: str


@dataclass(frozen=True)
class Loaded:
    """A program in the IR plus what its frontend recorded (framework flags, source file)."""

    program: Program
    flags: Flags
    source_file: str | None
    traced: TracedRecord | None = None
    notes: tuple[str, ...] = ()  # assumption lines from the frontend (module mode, structure used)
    provenance: tuple[Provenance, ...] = ()  # where each part of the IR came from
    serving: Serving | None = None  # an hf: step
    notices: tuple[str, ...] = ()  # lines shown under the bounds (a module mode nobody chose)

    @functools.cached_property
    def graph(self) -> EinsumGraph:
        """The einsum graph of `program`, lifted once: every GPU it is bounded on reuses it and
        what the backends derived from it (footprints, work), so a further GPU costs the pricing."""
        return lift(self.program)


def eager_calls(loaded: Loaded) -> tuple[EagerCall, ...] | None:
    """The ops as eager PyTorch runs them, where the torch loader recorded them (else None)."""
    if not getattr(loaded.traced, "eager", ()):
        return None
    from solar.frontends.torch.eager import eager_calls as calls  # imports torch

    return calls(loaded.traced)


def provenance_lines(loaded: Loaded) -> list[str]:
    return [p.describe() for p in loaded.provenance]
