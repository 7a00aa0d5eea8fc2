"""Host profiles: the host dispatch floors of one host and framework (CPU, PyTorch / CUDA / JAX
versions), as `hardware_specs/hosts/*.yaml` files combinable with any GPU spec; loading, lookup
and the default profile (docs/BOUNDS.md §17)."""

from __future__ import annotations

import datetime as _dt
import functools
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from solar.errors import SpecError
from solar.hardware.spec import SPEC_DIR, load_named

HOST_DIR = SPEC_DIR / "hosts"
DEFAULT_HOST = "default"  # the profile used where no --host is given
_EXAMPLE = "hardware_specs/hosts/default.yaml is a complete example"

Seconds = Annotated[float, Field(gt=0, lt=1.0, allow_inf_nan=False)]
Lead = Annotated[float, Field(ge=0, lt=1.0, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RnnFloor(_Strict):
    """Host floor of one eager recurrent call of this hidden size and batch (0: any): `call_seconds
    + step_seconds x steps x layers x directions` (cuDNN issues per-step kernels; fitted below
    every measured call of that shape)."""

    hidden: Annotated[int, Field(ge=0)] = 0
    batch: Annotated[int, Field(ge=0)] = 0
    call_seconds: Annotated[float, Field(ge=0, lt=1.0, allow_inf_nan=False)]
    step_seconds: Annotated[float, Field(ge=0, lt=1.0, allow_inf_nan=False)]


class HostFloors(_Strict):
    """The floors themselves (docs/BOUNDS.md §17): per ATen op (as exported before decomposition),
    per op and argument class (solar.frontends.argclass: a class's floor applies to a call
    whose tokens include the class's; it never lowers the op's own), for an op that launches a
    kernel and has no entry, for any op (views and no-kernel ops), per
    nn.Module call (an empty module's; leaf modules by class, with their ops, and by class and
    exact op sequence where a class's measured variants run different ops), per recurrent op
    (by hidden size and batch), a JAX dispatch, and the timing protocol's host head start."""

    torch_eager_op_seconds: dict[str, Seconds]
    torch_eager_class_seconds: dict[str, dict[str, Seconds]] = {}
    torch_eager_kernel_seconds: Seconds
    torch_eager_any_seconds: Seconds
    torch_empty_module_seconds: Seconds | None = None
    torch_module_seconds: dict[str, Seconds] = {}
    torch_module_ops_seconds: dict[str, dict[str, Seconds]] = {}
    torch_rnn_seconds: dict[str, list[RnnFloor]] = {}
    jax_dispatch_seconds: Seconds | None = None
    timing_lead_seconds: Lead = 0.0


class HostProfile(_Strict):
    """One host's dispatch floors and where they come from: the host CPU and framework versions
    they hold for, when and how they were measured, the margin below the least measured
    (`margin`: every floor is that fraction of the least measured, with its reason), the raw
    files they were derived from, and a source per floor."""

    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    description: Annotated[str, Field(min_length=1)]
    host_cpu: Annotated[str, Field(min_length=1)]
    gpu: str = ""  # the GPU the calibration ran with ("" for a derived profile)
    torch: Annotated[str, Field(min_length=1)]
    cuda: str = ""
    jax: str = ""
    date: Annotated[str, Field(min_length=1)]
    method: Annotated[str, Field(min_length=1)]
    margin: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
    margin_source: Annotated[str, Field(min_length=1)]
    # The margin one calibration of this host would need (a single run sits further above the
    # host's least than the least of many does), with its reason; what `solar calibrate` applies
    # to a host calibrated once. None: not derived (one run, or a derived profile).
    one_run_margin: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] | None = None
    one_run_margin_source: str = ""
    derived_from: tuple[str, ...] = ()
    sources: dict[str, str]
    floors: HostFloors

    @field_validator("date", mode="before")
    @classmethod
    def _date_as_text(cls, value: object) -> object:
        return value.isoformat() if isinstance(value, _dt.date) else value  # YAML reads 2026-12-01 as a date

    @model_validator(mode="after")
    def _every_floor_sourced(self) -> HostProfile:
        if self.one_run_margin is not None and not self.one_run_margin_source.strip():
            raise ValueError("one_run_margin has no one_run_margin_source; say how it was derived")
        given = {k for k, v in self.floors if v not in (None, {}, 0.0)}
        missing = sorted(given - set(self.sources))
        if missing:
            raise ValueError(f"sources: no source for floors.{missing[0]}; say where each floor comes from")
        blank = sorted(k for k, v in self.sources.items() if not v.strip())
        if blank:
            raise ValueError(f"sources.{blank[0]} is blank; name the measurement or derivation")
        return self

    def describe(self) -> str:
        """One line: the profile, its host and versions, date, margin."""
        if self.name == DEFAULT_HOST:
            return (
                f"floors of the default host profile: {self.margin:g} x the least measured on every calibrated "
                f"host ({self.date}; {self.torch}); hardware_specs/hosts/{DEFAULT_HOST}.yaml"
            )
        versions = ", ".join(f"{k} {v}" for k, v in (("torch", self.torch), ("CUDA", self.cuda), ("JAX", self.jax)) if v)
        return (
            f"host profile {self.name} ({self.host_cpu}; {versions}; measured {self.date}; "
            f"floors {self.margin:g} x the least measured)"
        )


def load_host_file(path: str | Path) -> HostProfile:
    """Read and validate one host profile YAML; any problem is a one-line SpecError."""
    return load_named(path, HostProfile, "a host profile YAML file", _EXAMPLE)[0]


@functools.cache
def _host_files() -> dict[str, Path]:
    return {p.stem: p for p in HOST_DIR.glob("*.yaml")}


@functools.cache
def _load_named(path: Path) -> HostProfile:
    return load_host_file(path)


def list_hosts() -> tuple[HostProfile, ...]:
    """Every committed host profile, sorted by name."""
    return tuple(sorted((_load_named(p) for p in _host_files().values()), key=lambda h: h.name))


def get_host(name_or_path: str | None = None) -> HostProfile:
    """A host profile by name (hardware_specs/hosts/NAME.yaml, any case) or from a path to a
    profile YAML; None: the default profile."""
    if name_or_path is None:
        name_or_path = DEFAULT_HOST
    if not isinstance(name_or_path, str) or not name_or_path.strip():
        raise SpecError("--host: give a host profile name (see hardware_specs/hosts/) or a path to one")
    if name_or_path.endswith((".yaml", ".yml")) or Path(name_or_path).is_file():
        return load_host_file(name_or_path)
    files = {k.casefold(): p for k, p in _host_files().items()}
    path = files.get(name_or_path.strip().casefold())
    if path is None:
        known = ", ".join(sorted(_host_files()))
        raise SpecError(
            f"unknown host profile {name_or_path!r}; known: {known} (or pass a path to a host profile YAML; "
            "`solar calibrate --dispatch-only` writes one for the host at hand)"
        )
    return _load_named(path)
