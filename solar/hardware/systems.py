"""System specs: a GPU spec and the topology that joins several of them (the fabric inside a node,
the NICs between nodes), one sourced YAML file each in `hardware_specs/systems/`; loading and lookup."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from solar.errors import SpecError
from solar.hardware.spec import (
    SPEC_DIR,
    HardwareSpec,
    Sourced,
    get_spec,
    load_named,
)

SYSTEM_DIR = SPEC_DIR / "systems"
_EXAMPLE = "hardware_specs/systems/8xH100-SXM.yaml is a complete example"
MAX_NODES = 100_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourcedFlag(_Strict):
    """A yes/no fact about the hardware and the document it comes from."""

    value: Annotated[bool, Field(strict=True)]
    source: Annotated[str, Field(strict=True, min_length=1, pattern=r"\S")]


class Fabric(_Strict):
    """One kind of link a GPU has to its peers: its per-GPU bandwidth in each direction (what one
    GPU can send, and separately receive, at once), the least time one transfer through it takes,
    and whether the switch reduces in the network (so a reduction need not pass through a GPU)."""

    kind: Literal["nvswitch", "nvlink", "pcie", "infiniband", "roce"]
    generation: Annotated[str, Field(strict=True, min_length=1)]
    bandwidth_bytes_per_s_per_direction: Sourced
    latency_seconds: Sourced
    in_network_reduction: SourcedFlag


class SystemSpec(_Strict):
    """`nodes` nodes of `gpus_per_node` GPUs of spec `gpu`; `scale_up` joins the GPUs of one node,
    `scale_out` (per GPU: its share of the node's NICs) joins nodes."""

    name: Annotated[str, Field(strict=True, min_length=1)]
    aliases: tuple[str, ...] = ()
    gpu: Annotated[str, Field(strict=True, min_length=1)]
    gpus_per_node: Sourced
    scale_up: Fabric
    scale_out: Fabric | None = None
    nodes: Annotated[int, Field(strict=True, ge=1, le=MAX_NODES)] = 1

    @property
    def world(self) -> int:
        return int(self.gpus_per_node.value) * self.nodes

    @property
    def per_node(self) -> int:
        return int(self.gpus_per_node.value)

    @property
    def gpu_spec(self) -> HardwareSpec:
        return get_spec(self.gpu)

    @property
    def shown(self) -> str:
        """The name with the node count where there is more than one node (`8xH100-SXM x2`)."""
        return self.name if self.nodes == 1 else f"{self.name} x{self.nodes} nodes"

    def with_nodes(self, nodes: int) -> SystemSpec:
        if not 1 <= nodes <= MAX_NODES:
            raise SpecError(f"--nodes {nodes}: must be 1..{MAX_NODES}; pass a node count in that range")
        if nodes > 1 and self.scale_out is None:
            raise SpecError(
                f"system {self.name} has no scale_out fabric (NICs between nodes); use --nodes 1 "
                "or a system spec with a scale_out section"
            )
        return self.model_copy(update={"nodes": nodes})


# Physical range of each number (inclusive), wider than any part made: outside it is a typo or a
# wrong unit (bits for bytes, microseconds for seconds).
SYSTEM_RANGES: dict[str, tuple[float, float, str]] = {
    "gpus_per_node": (1, 1024, "GPUs"),
    "bandwidth_bytes_per_s_per_direction": (1e8, 1e14, "bytes/s"),
    "latency_seconds": (1e-9, 1e-3, "s"),
}


def _physical_problem(spec: SystemSpec) -> str | None:
    numbers = [("gpus_per_node", "gpus_per_node", spec.gpus_per_node.value)]
    for name in ("scale_up", "scale_out"):
        fabric = getattr(spec, name)
        if fabric is not None:
            numbers += [
                (f"{name}.{key}", key, getattr(fabric, key).value)
                for key in ("bandwidth_bytes_per_s_per_direction", "latency_seconds")
            ]
    for key, range_key, value in numbers:
        lo, hi, unit = SYSTEM_RANGES[range_key]
        if not lo <= value <= hi:
            return f"{key}.value: {value:g} is outside the physical range {lo:g}..{hi:g} {unit}"
    if spec.gpus_per_node.value != int(spec.gpus_per_node.value):
        return f"gpus_per_node.value: {spec.gpus_per_node.value:g} is not a whole number"
    return None


def load_system_file(path: str | Path) -> SystemSpec:
    """Read and validate one system YAML; any problem is a one-line SpecError naming file and key."""
    spec, shown = load_named(path, SystemSpec, "a system spec YAML file", _EXAMPLE, _physical_problem)
    try:
        get_spec(spec.gpu)
    except SpecError as exc:
        raise SpecError(f"{shown}: gpu: {exc}") from None
    return spec


@functools.cache
def list_systems() -> tuple[SystemSpec, ...]:
    """Every system spec in SYSTEM_DIR, sorted by name."""
    return tuple(sorted((load_system_file(p) for p in SYSTEM_DIR.glob("*.yaml")), key=lambda s: s.name))


def get_system(name_or_path: str, nodes: int = 1) -> SystemSpec:
    """A system by name (any case), unique alias, or path to a system YAML; with `nodes` nodes."""
    if name_or_path.endswith((".yaml", ".yml")) or Path(name_or_path).is_file():
        return load_system_file(name_or_path).with_nodes(nodes)
    wanted = name_or_path.strip().casefold()
    systems = list_systems()
    for spec in systems:
        if spec.name.casefold() == wanted:
            return spec.with_nodes(nodes)
    matches = [s for s in systems if wanted in (a.casefold() for a in s.aliases)]
    if len(matches) == 1:
        return matches[0].with_nodes(nodes)
    known = ", ".join(s.name for s in systems)
    if matches:
        raise SpecError(f"system name {name_or_path!r} is ambiguous; pass one of: {known}")
    raise SpecError(f"unknown system {name_or_path!r}; known: {known} (or pass a path to a system YAML)")
