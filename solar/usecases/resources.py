"""The resources of a GPU that the bounds are monotone in, and the least amount of each with which a
program's compute term meets a target: a tensor-core path (`tensor bf16`), the SIMT pipes (`simt`),
the SFU (`sfu`). Rates come from solar.backends.compute's own functions, so the inverse LP
(solar.usecases.inverse) is the bound's LP with one rate left free."""

from __future__ import annotations

from dataclasses import dataclass

from solar.backends.assumptions import Assumptions
from solar.backends.compute import (
    clock_scale,
    compute_time,
    tensor_mac_rate,
    tensor_paths,
    unit_rates,
)
from solar.backends.work import Work
from solar.hardware import HardwareSpec
from solar.hardware.spec import Sourced
from solar.ir.dtypes import DType
from solar.usecases.inverse import Row, least_path_rate, least_unit_scale

SIMT_UNITS = frozenset({"fma", "alu"})  # every rate on these is a SIMT rate times a constant
PROVISIONED = "provisioned by solar (the least rate meeting the target)"


@dataclass(frozen=True, slots=True)
class Resource:
    """A compute resource: `kind` "tensor" (one dtype path `key`), "simt" (all SIMT rates scaled
    together; reported as the fp32 rate) or "sfu"."""

    kind: str
    key: str = ""

    @property
    def label(self) -> str:
        return {"tensor": f"tensor {self.key}", "simt": "SIMT rates", "sfu": "SFU"}[self.kind]

    def rate(self, spec: HardwareSpec) -> float | None:
        """The spec's rate of this resource (flop/s; ops/s for ints and the SFU)."""
        if self.kind == "tensor":
            return spec.tensor_rate(self.key)
        if self.kind == "simt":
            return spec.simt_rate("fp32")
        return spec.sfu_ops_per_s.value

    def with_rate(self, spec: HardwareSpec, rate: float) -> HardwareSpec:
        """`spec` with this resource at `rate` (SIMT: every SIMT rate scaled in proportion)."""
        if self.kind == "tensor":
            rates = dict(spec.tensor_core_flops_per_s)
            rates[self.key] = Sourced(value=rate, source=PROVISIONED)  # type: ignore[index]
            return spec.model_copy(update={"tensor_core_flops_per_s": rates})
        if self.kind == "simt":
            alpha = rate / spec.simt_rate("fp32")  # type: ignore[operator]
            rates = {
                k: Sourced(value=v.value * alpha, source=PROVISIONED)
                for k, v in spec.simt_flops_per_s.items()
            }
            return spec.model_copy(update={"simt_flops_per_s": rates})
        return spec.model_copy(update={"sfu_ops_per_s": Sourced(value=rate, source=PROVISIONED)})


def resource_of(binding_path: str | None) -> Resource | None:
    """The resource behind a compute binding path (`tensor bf16`, `fma fp32`, `alu`, `sfu`)."""
    if not binding_path:
        return None
    unit, _, key = binding_path.partition(" ")
    if unit == "tensor":
        return Resource("tensor", key)
    return Resource("sfu") if unit == "sfu" else Resource("simt")


def used_resources(work: Work, spec: HardwareSpec, assumptions: Assumptions) -> tuple[Resource, ...]:
    """Every resource the program's work may use: each tensor path any of its MAC classes may take
    (on any GPU, not only `spec`), the SIMT pipes, and the SFU when it has transcendentals."""
    precision = assumptions.precision
    keys: dict[str, None] = {}
    for (dtype, tf32), _ in work.macs:
        keys.update(dict.fromkeys(tensor_paths(dtype, tf32, precision)))
    out = [Resource("tensor", k) for k in keys]
    out.append(Resource("simt"))
    if any("sfu" in unit_rates(spec, item, precision, 1.0) for item, _ in work.simt):
        out.append(Resource("sfu"))
    return tuple(out)


def rows(work: Work, spec: HardwareSpec, assumptions: Assumptions, res: Resource) -> tuple[Row, ...]:
    """The compute LP's rows on `spec`, with `res` (a tensor path) split off as the scaled path:
    a MAC class that may take it gets Row.scaled = clock scale / 2 (MACs per flop/s of the path) and
    keeps, as its fixed tensor rate, the fastest of its OTHER legal paths."""
    precision = assumptions.precision
    scale = clock_scale(spec, assumptions.clock_mhz)
    out: list[Row] = []
    without = None
    if res.kind == "tensor":
        rates = {k: v for k, v in spec.tensor_core_flops_per_s.items() if k != res.key}
        without = spec.model_copy(update={"tensor_core_flops_per_s": rates})
    for item, n in (*work.macs, *work.simt):
        base = unit_rates(spec, item, precision, scale)
        scaled = 0.0
        if without is not None and isinstance(item[0], DType):
            dtype, tf32 = item  # type: ignore[misc]
            if res.key in tensor_paths(dtype, tf32, precision):
                scaled = scale / 2
                other = tensor_mac_rate(without, item, precision)  # type: ignore[arg-type]
                base.pop("tensor", None)
                if other:
                    base["tensor"] = other * scale
        out.append(Row(float(n), tuple(sorted(base.items())), scaled))
    return tuple(out)


def least_rate(
    work: Work,
    spec: HardwareSpec,
    assumptions: Assumptions,
    res: Resource,
    target_s: float,
) -> float | None:
    """The least rate of `res` (in the spec's unit) with which the compute term meets `target_s`,
    every other rate as in `spec` (None: unreachable; 0.0: the resource need do nothing)."""
    if work.is_zero:
        return 0.0
    table = rows(work, spec, assumptions, res)
    if res.kind == "tensor":
        return least_path_rate(table, target_s, "tensor")
    units = SIMT_UNITS if res.kind == "simt" else frozenset({"sfu"})
    alpha = least_unit_scale(table, target_s, units)
    return None if alpha is None else alpha * res.rate(spec)  # type: ignore[operator]


def compute_seconds(work: Work, spec: HardwareSpec, assumptions: Assumptions) -> float:
    return compute_time(work, spec, assumptions).seconds
