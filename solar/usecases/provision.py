"""Inverse roofline: what hardware could run a program in a target time T. For each resource alone
(every other one as on the `like` GPU): the least DRAM bandwidth, tensor-core rate per path, SIMT
rate, SFU rate and on-chip capacity, and the largest launch floor, with which the chosen level's
bound is <= T; the frontier of (bandwidth, compute scale) pairs; and which existing specs meet T.

Every number inverts the bound's own terms (solar.backends): the memory and launch terms are
linear in their resource, the compute term is the inverse of its LP (solar.usecases.inverse), the
cache-aware traffic is inverted over whole bytes (solar.usecases.frontier). Since a bound is a
necessary condition, a resource below the returned value cannot meet T on any implementation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from solar.api import assumptions_of, load
from solar.backends.assumptions import Assumptions
from solar.backends.bounds import analyze_graph
from solar.backends.derived import recurrence_level
from solar.backends.dispatch import Floors, eager_host, eager_stages, floors_from_host, floors_given
from solar.backends.levels import SOL_LEVELS, Level
from solar.backends.work import graph_work, total
from solar.errors import UsageError
from solar.frontends.loaded import Loaded, eager_calls
from solar.hardware import get_spec, list_specs
from solar.hardware.host import get_host
from solar.report.units import fmt_seconds
from solar.usecases.dispatch_floor import largest_floor, makespan_curve
from solar.usecases.frontier import (
    cache_aware_bytes_at,
    largest_x,
    least_bandwidth,
    least_onchip,
    unfused_frontier,
)
from solar.usecases.resources import compute_seconds, least_rate, used_resources


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


class Requirement(_Model):
    """One resource alone: `value` is the least (`limit` "min") or largest ("max") amount meeting
    the target, None when no amount of it alone can (`note` says which term is in the way);
    `like_value` is the like GPU's amount, `check_seconds` the level's bound re-priced with
    `value` in place."""

    resource: str
    unit: str
    limit: str
    value: float | None
    like_value: float | None
    note: str = ""
    check_seconds: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.value is None or not self.like_value:
            return None
        return self.value / self.like_value


class FrontierPoint(_Model):
    """A (DRAM bandwidth, compute scale) pair on the boundary of the region meeting the target;
    compute scale multiplies every compute rate of the like GPU (as a clock would)."""

    bandwidth_bytes_per_s: float
    compute_scale: float


class SpecVerdict(_Model):
    arch: str
    seconds: float
    meets: bool
    dram_bytes_per_s: float
    compute_scale: (
        float  # like GPU's compute term / this GPU's: its compute, in the like GPU's scale
    )


class DispatchPoint(_Model):
    """A point of the eager_host bound as a function of one uniform host dispatch floor."""

    floor_seconds: float
    seconds: float


class Provision(_Model):
    program: str
    like: str
    level: str
    target_seconds: float
    precision: str
    clock_mhz: float | None
    like_seconds: float  # the level's bound on the like GPU
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float
    requirements: list[Requirement]
    frontier: list[FrontierPoint]  # the level's region is a corner (its terms are a max): one point
    unfused_frontier: list[FrontierPoint]  # the eager bound's terms add per kernel: a curve
    specs: list[SpecVerdict]
    eager_ops: int = 0  # eager ATen ops (0: not a traced PyTorch program)
    eager_device_seconds: float | None = None  # the eager_host bound with no host cost
    dispatch_curve: list[DispatchPoint] = []  # eager_host(uniform floor), exact polyline

    def requirement(self, resource: str) -> Requirement:
        for r in self.requirements:
            if r.resource == resource:
                return r
        raise UsageError(
            f"no requirement {resource!r}; have {', '.join(r.resource for r in self.requirements)}"
        )


def _blocked(terms: dict[str, float], target: float, skip: str) -> str:
    """Which other terms alone exceed the target (then no amount of this resource meets it)."""
    over = [
        f"{k} term {fmt_seconds(v)} > target" for k, v in terms.items() if k != skip and v > target
    ]
    return "; ".join(over)


def provision_loaded(
    loaded: Loaded,
    target_seconds: float,
    like: str = "H100-SXM",
    level: str = Level.CACHE_AWARE,
    assumptions: Assumptions | str | None = None,
    *policy: Any,
    **options: Any,
) -> Provision:
    """The provisioning of a loaded program for a target time under the precision and clock of
    `assumptions` (or the policy arguments as solar.api.assumptions_of takes them), cold cache."""
    if level not in SOL_LEVELS:
        raise UsageError(f"unknown level {level!r}; provision inverts one of {', '.join(SOL_LEVELS)}")
    if not (
        isinstance(target_seconds, (int, float))
        and math.isfinite(target_seconds)
        and target_seconds > 0
    ):
        raise UsageError(
            f"target {target_seconds!r} s is not a positive time; give e.g. --target-ms 1.5"
        )
    spec = get_spec(like)
    given = assumptions_of(assumptions, *policy, **options)
    program = loaded.program
    graph = loaded.graph
    work = total(graph_work(graph).values())
    assumptions = Assumptions(precision=given.precision, clock_mhz=given.clock_mhz, tf32_flags=loaded.flags)
    a = analyze_graph(graph, spec, assumptions)
    bound = a.fused if level == Level.FUSED else a.cache_aware
    assert bound is not None and a.traffic is not None
    T = float(target_seconds)
    C, M, L = bound.compute_seconds, bound.memory_seconds, bound.launch_seconds
    terms = {"compute": C, "memory": M, "launch": L}
    bw = spec.dram_bytes_per_s
    nbytes = a.totals.dram_bytes if level == Level.FUSED else a.totals.cache_aware_dram_bytes
    reqs: list[Requirement] = []

    blocked = _blocked(terms, T, "memory")
    need = None if blocked else least_bandwidth(nbytes, T)
    reqs.append(
        Requirement(
            resource="dram bandwidth",
            unit="bytes/s",
            limit="min",
            value=need,
            like_value=bw,
            note=blocked,
            check_seconds=None if need in (None, 0.0) else max(C, nbytes / need, L),
        )
    )
    blocked = _blocked(terms, T, "compute")
    for res in used_resources(work, spec, assumptions):
        rate = None if blocked else least_rate(work, spec, assumptions, res, T)
        note = blocked or (
            "" if rate is not None else "other compute units alone exceed the target"
        )
        if rate == 0.0:
            note = "not needed: the other units meet the target without it"
        check = None
        if rate:
            check = max(
                compute_seconds(work, res.with_rate(spec, rate), assumptions), M, L
            )
        unit = "op/s" if res.key.startswith("int") or res.kind == "sfu" else "flop/s"
        reqs.append(
            Requirement(
                resource=res.label,
                unit=unit,
                limit="min",
                value=rate,
                like_value=res.rate(spec),
                note=note,
                check_seconds=check,
            )
        )
    # the SM clock: every compute rate scales with it, so the LP's optimum scales by its inverse
    clock = spec.boost_clock_mhz.value if assumptions.clock_mhz is None else assumptions.clock_mhz
    least_clock = None if blocked else clock * C / T
    reqs.append(
        Requirement(
            resource="SM clock (all compute rates)",
            unit="MHz",
            limit="min",
            value=least_clock,
            like_value=clock,
            note=blocked,
            check_seconds=None if not least_clock else max(C * clock / least_clock, M, L),
        )
    )
    # on-chip capacity: through the cache-aware traffic, whatever the level
    ca_terms = {"compute": C, "launch": L}
    blocked = _blocked(ca_terms, T, "")
    onchip = None if blocked else least_onchip(graph, a.traffic, bw, T)
    note = blocked or ("" if onchip is not None else "the compulsory bytes alone exceed the target")
    check = (
        None if onchip is None else max(C, cache_aware_bytes_at(graph, a.traffic, onchip) / bw, L)
    )
    reqs.append(
        Requirement(
            resource="on-chip capacity",
            unit="bytes",
            limit="min",
            value=None if onchip is None else float(onchip),
            like_value=spec.onchip_bytes,
            note=note + (" (cache-aware traffic)" if not note else ""),
            check_seconds=check,
        )
    )
    blocked = _blocked(terms, T, "launch")
    reqs.append(
        Requirement(
            resource="launch floor",
            unit="s",
            limit="max",
            value=None if blocked else T,
            like_value=spec.min_kernel_seconds.value,
            note=blocked or "one kernel: the floor itself",
        )
    )
    c, d, lf = _ops(a)
    eager = a.totals.unfused_dram_bytes
    beta = largest_x(d, np.maximum(c, lf), T)  # the eager bound's least bandwidth: largest 1/BW
    if beta is not None and eager > 0:
        beta = min(beta, T / eager)
    eager_bw = None if beta is None else (0.0 if beta == math.inf else 1 / beta)
    reqs.append(
        Requirement(
            resource="dram bandwidth (unfused)",
            unit="bytes/s",
            limit="min",
            value=eager_bw,
            like_value=bw,
            note=""
            if eager_bw is not None
            else "the eager kernels' compute and launches alone exceed the target",
            check_seconds=None
            if not eager_bw
            else max(np.maximum(np.maximum(c, d / eager_bw), lf).sum(), eager / eager_bw),
        )
    )
    unfused_l = _unfused_launch(c, d / bw, lf > 0, eager / bw, T)
    reqs.append(
        Requirement(
            resource="launch floor (unfused)",
            unit="s",
            limit="max",
            value=unfused_l,
            like_value=spec.min_kernel_seconds.value,
            note=""
            if unfused_l is not None
            else "the eager kernels exceed the target without launches",
        )
    )
    frontier = (
        []
        if L > T
        else [
            FrontierPoint(
                bandwidth_bytes_per_s=least_bandwidth(nbytes, T) or math.inf, compute_scale=C / T
            )
        ]
    )
    curve = [
        FrontierPoint(bandwidth_bytes_per_s=1 / beta, compute_scale=1 / sigma)
        for beta, sigma in unfused_frontier(c, d, lf, eager, T)
    ]
    specs = []
    for s in list_specs():
        other = analyze_graph(graph, s, assumptions)
        ob = other.fused if level == Level.FUSED else other.cache_aware
        assert ob is not None
        specs.append(
            SpecVerdict(
                arch=s.name,
                seconds=ob.seconds,
                meets=ob.seconds <= T,
                dram_bytes_per_s=s.dram_bytes_per_s,
                compute_scale=C / ob.compute_seconds if ob.compute_seconds else 0.0,
            )
        )
    rows, dispatch = _dispatch_rows(loaded, a, graph, spec, assumptions, T)
    reqs.extend(rows)
    return Provision(
        program=program.name,
        like=spec.name,
        level=level,
        target_seconds=T,
        precision=assumptions.precision,
        clock_mhz=assumptions.clock_mhz,
        like_seconds=bound.seconds,
        compute_seconds=C,
        memory_seconds=M,
        launch_seconds=L,
        requirements=reqs,
        frontier=frontier,
        unfused_frontier=curve,
        specs=specs,
        **dispatch,
    )


UNIFORM = "host dispatch floor (eager, uniform)"
SCALED = "host dispatch floors, scale (eager, default host profile)"


def _dispatch_rows(
    loaded: Loaded, a: Any, graph: Any, spec: Any, assumptions: Assumptions, T: float
) -> tuple[list[Requirement], dict[str, Any]]:
    """The eager_host level inverted in its host floors (solar.usecases.dispatch_floor): the
    largest uniform floor per kernel-launching op (views 0, no head start: as `--dispatch-us`), and
    the largest factor on the default host profile's floors (its per-op mix and head start kept: a
    host that is uniformly faster or slower)."""
    calls = eager_calls(loaded)
    if not calls:
        note = "not a traced PyTorch forward: no eager dispatch to invert"
        return [
            Requirement(resource=r, unit=u, limit="max", value=None, like_value=None, note=note)
            for r, u in ((UNIFORM, "s"), (SCALED, "x"))
        ], {}
    rec = recurrence_level(a, graph, spec, assumptions)
    device_floors = rec.instance_floors if rec is not None else {}
    stages = eager_stages(a, calls, device_floors)
    device = stages.device
    D = sum(device)
    blocked = f"the device stage alone ({fmt_seconds(D)}) exceeds the target" if D > T else ""
    uniform = largest_floor([float(k) for k in stages.launches], device, 0.0, T)
    base = floors_from_host(get_host(None))  # the default host profile's floors
    like_floor = base.kernel_seconds

    def check(floors: Floors) -> float:
        return eager_host(a, calls, floors, device_floors).bound.seconds

    rows = [
        Requirement(
            resource=UNIFORM, unit="s", limit="max",
            value=None if uniform is None else (uniform if math.isfinite(uniform) else None),
            like_value=like_floor,
            note=blocked or ("no op launches a kernel: any floor" if uniform == math.inf else
                             f"{stages.launches.count(True)} of {len(calls)} eager ops launch a kernel"),
            check_seconds=None if uniform is None or not math.isfinite(uniform) else check(floors_given(uniform)),
        )
    ]
    scale = largest_floor(stages.host(base), device, base.lead_seconds, T)
    finite = scale is not None and math.isfinite(scale)
    rows.append(Requirement(
        resource=SCALED, unit="x", limit="max", value=scale if finite else None, like_value=1.0,
        note=blocked or ("" if finite else "no op has a host floor: any factor"),
        check_seconds=check(_scaled(base, scale)) if finite else None,  # type: ignore[arg-type]
    ))
    x_max = 2 * uniform if uniform and math.isfinite(uniform) else 2 * (like_floor or 1e-5)
    curve = makespan_curve([float(k) for k in stages.launches], device, 0.0, x_max)
    return rows, {
        "eager_ops": len(calls),
        "eager_device_seconds": D,
        "dispatch_curve": [DispatchPoint(floor_seconds=x, seconds=m) for x, m in curve],
    }


def _scaled(floors: Any, k: float) -> Any:
    return floors.scaled(k)  # every floor (ops, module calls, recurrent steps) times k


def _ops(a: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per eager kernel: compute seconds, DRAM bytes and launch floor on the like GPU."""
    c = np.array([op.compute_seconds for op in a.ops], dtype=float)
    d = np.array([op.dram_bytes for op in a.ops], dtype=float)
    lf = np.array([op.launch_seconds for op in a.ops], dtype=float)
    return c, d, lf


def _unfused_launch(
    c: np.ndarray, m: np.ndarray, runs: np.ndarray, eager_memory: float, T: float
) -> float | None:
    """The largest launch floor L with max(Σ_g max(c_g, m_g, L·runs_g), eager memory) <= T."""
    if eager_memory > T:
        return None
    return largest_x(runs.astype(float), np.maximum(c, m), T)


def provision(
    model_or_path: Any,
    inputs: Sequence[Any] | None = None,
    target_ms: float = 1.0,
    like: str = "H100-SXM",
    level: str = Level.CACHE_AWARE,
    assumptions: Assumptions | None = None,
    *,
    mode: str | None = None,
    train: bool = False,
    **policy: Any,
) -> Provision:
    """What hardware could run the program in `target_ms` milliseconds (see the module docstring);
    `assumptions` or the keywords precision / clock_mhz as for solar.api.analyze."""
    get_spec(like)
    a = assumptions_of(assumptions, **policy)
    loaded = load(model_or_path, inputs, mode, train=train)
    return provision_loaded(loaded, float(target_ms) / 1e3, like, level, a)
