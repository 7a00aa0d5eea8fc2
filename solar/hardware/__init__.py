"""Hardware facts: one sourced YAML spec per GPU, loaded into a strict model."""

from solar.hardware.host import get_host
from solar.hardware.spec import (
    SPEC_DIR,
    DramLevel,
    HardwareSpec,
    MemoryLevel,
    Sourced,
    get_spec,
    list_specs,
    load_spec_file,
)

__all__ = [
    "SPEC_DIR",
    "DramLevel",
    "HardwareSpec",
    "MemoryLevel",
    "Sourced",
    "get_host",
    "get_spec",
    "list_specs",
    "load_spec_file",
]
