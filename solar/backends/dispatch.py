"""The eager@host bound (docs/BOUNDS.md §17): eager execution as an in-order two-stage pipeline. The
host dispatches the eager ops one after another, op i taking at least its measured dispatch floor
a_i; the device runs them in the same order, op i taking at least its unfused device bound d_i and
starting no earlier than the host has finished ops 1..i-1 (its launch happens inside op i's own
dispatch). With the host allowed a head start of `lead` seconds before the timed region begins:

    C_0 = 0,   C_i = max(C_{i-1}, A_{i-1} - lead) + d_i,   A_i = a_1 + ... + a_i
    eager_host = max(C_n, A_n - lead)

the exact minimum makespan, computed in one pass (O(n)). a_i is op i's own floor, plus the host
time the nn.Module calls that end with op i spend around their ops (`host_floors`). Valid only for
the host and framework the floors were measured on (a host profile, solar.hardware.host: the
default profile's floors sit below every calibrated host's) or for the floor the user gives
(`--dispatch-us`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from solar.backends.bounds import Analysis, Bound
from solar.backends.levels import Level
from solar.hardware.host import DEFAULT_HOST, HostProfile


# nn.Module calls, outermost first: (the call's key, the module's class name).
Modules = tuple[tuple[str, str], ...]


class EagerCall(Protocol):
    """One op as eager PyTorch runs it (before decomposition): its ATen name, the op instance its
    statements form in the unfused bound (None: it became no statement), whether it is a view, the
    nn.Module calls it runs inside, for a recurrent op its steps x layers x directions, and its
    argument class (tokens, solar.frontends.argclass)."""

    op: str
    instance: int | None
    view: bool
    modules: Modules
    rnn: tuple[int, int, int]
    features: frozenset[str]


@dataclass(frozen=True, slots=True)
class HostCall:
    """What the host floor of one eager op depends on: a recurrent op's (steps x layers x
    directions, hidden, batch) and its argument class's tokens too."""

    op: str
    launches: bool
    modules: Modules = ()
    rnn: tuple[int, int, int] = ()
    features: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Floors:
    """Host dispatch floors: per op where measured, else `kernel_seconds` for an op that launches a
    kernel and `any_seconds` for one that launches none, raised to the largest floor of the op's
    argument classes (`by_class`: op -> {tokens: floor}) whose tokens the call has; a recurrent op at least `call + step x
    layer-steps` (`rnn`: op -> {(hidden, batch): (call, step)}, measured through its nn.Module at
    that shape; (0, 0): any shape); per nn.Module call at
    least `empty_module_seconds` besides its ops, a leaf module of a measured class (`modules`) at
    least its floor with its ops, and, where it ran exactly the ops of a measured variant of its
    class (`module_ops`: class -> op sequence -> floor), that variant's floor. `source` says where
    they come from."""

    source: str
    kernel_seconds: float
    any_seconds: float = 0.0
    by_op: Mapping[str, float] = field(default_factory=dict)
    by_class: Mapping[str, Mapping[frozenset[str], float]] = field(default_factory=dict)
    lead_seconds: float = 0.0
    empty_module_seconds: float = 0.0
    modules: Mapping[str, float] = field(default_factory=dict)
    module_ops: Mapping[str, Mapping[tuple[str, ...], float]] = field(default_factory=dict)
    rnn: Mapping[str, Mapping[tuple[int, int], tuple[float, float]]] = field(default_factory=dict)
    host: str = ""  # the host profile they come from ("": given by the user)

    def scaled(self, k: float) -> Floors:
        """Every floor times k (a host uniformly k times slower): every a_i scales by k."""
        return replace(
            self, source=f"{self.source}, x{k:.6g}", kernel_seconds=self.kernel_seconds * k,
            any_seconds=self.any_seconds * k, by_op={op: v * k for op, v in self.by_op.items()},
            by_class={op: {c: v * k for c, v in by.items()} for op, by in self.by_class.items()},
            empty_module_seconds=self.empty_module_seconds * k,
            modules={cls: v * k for cls, v in self.modules.items()},
            module_ops={cls: {ops: v * k for ops, v in by.items()} for cls, by in self.module_ops.items()},
            rnn={op: {shape: (c * k, t * k) for shape, (c, t) in fits.items()} for op, fits in self.rnn.items()},
        )

    def floor(self, op: str, launches: bool, rnn: tuple[int, int, int] = (), features: frozenset[str] = frozenset()) -> float:
        base = self.by_op[op] if op in self.by_op else self.kernel_seconds if launches else self.any_seconds
        base = max([base, *(v for tokens, v in self.by_class.get(op, {}).items() if tokens <= features)])
        fits = self.rnn.get(op, {})
        fit = fits.get(tuple(rnn[1:]), fits.get((0, 0))) if rnn else None
        if fit is not None:  # measured with the initial state given (no zeros inside)
            return fit[0] + fit[1] * rnn[0]
        return base


def host_floors(calls: Sequence[HostCall], floors: Floors) -> list[float]:
    """a_i of every call: its op's floor, plus, at the last op of each nn.Module call, that call's
    own host time besides its ops and inner calls (docs/BOUNDS.md §17): `empty_module_seconds`, or
    for a leaf of a measured class the part of its floor its ops' floors leave (the floor of the
    variant whose ops it ran exactly, where one was measured, else the class's). A recurrent op was
    measured through its module: its floor covers that call and the module's other ops (the
    initial states it makes), so it pays only what those ops' floors leave, and the module adds
    nothing. Placed at the call's last op: it delays only later ops, which run after the call
    returns."""
    host = [floors.floor(c.op, c.launches, c.rnn, c.features) for c in calls]
    last: dict[str, int] = {}
    kind: dict[str, str] = {}
    direct: dict[str, float] = {}
    ops: dict[str, list[str]] = {}  # per module call, the ops it issued itself
    parents: set[str] = set()
    through: set[str] = set()
    for i, c in enumerate(calls):
        for depth, (key, cls) in enumerate(c.modules):
            last[key], kind[key] = i, cls
            if depth + 1 < len(c.modules):
                parents.add(key)
        if c.modules:
            inner = c.modules[-1][0]
            direct[inner] = direct.get(inner, 0.0) + host[i]
            ops.setdefault(inner, []).append(c.op)
            if c.op in floors.rnn:
                through.add(inner)
    own = list(host)
    for i, c in enumerate(calls):  # a recurrent op's floor covers its module's call and other ops
        if c.modules and c.op in floors.rnn:
            others = direct[c.modules[-1][0]] - host[i]
            own[i] = max(0.0, host[i] - others)
    for key, i in last.items():
        if key in through:
            continue
        extra = floors.empty_module_seconds
        if key not in parents and kind[key] in floors.modules:
            leaf = floors.module_ops.get(kind[key], {}).get(tuple(ops.get(key, ())), floors.modules[kind[key]])
            extra = max(extra, leaf - direct.get(key, 0.0))
        own[i] += extra
    return own


def floors_from_host(profile: HostProfile, lead_seconds: float | None = None) -> Floors:
    """The floors of a host profile (solar.hardware.host; hardware_specs/hosts/NAME.yaml)."""
    f = profile.floors
    return Floors(
        source=profile.describe() + (
            "; calibrate yours with `solar calibrate --dispatch-only` and pass --host" if profile.name == DEFAULT_HOST
            else "; valid for that host and framework only"
        ),
        kernel_seconds=f.torch_eager_kernel_seconds,
        any_seconds=f.torch_eager_any_seconds,
        by_op=dict(f.torch_eager_op_seconds),
        by_class={op: {frozenset(c.split()): v for c, v in by.items()} for op, by in f.torch_eager_class_seconds.items()},
        lead_seconds=f.timing_lead_seconds if lead_seconds is None else lead_seconds,
        empty_module_seconds=f.torch_empty_module_seconds or 0.0,
        modules=dict(f.torch_module_seconds),
        module_ops={cls: {tuple(k.split()): v for k, v in by.items()} for cls, by in f.torch_module_ops_seconds.items()},
        rnn={op: {(r.hidden, r.batch): (r.call_seconds, r.step_seconds) for r in fits}
             for op, fits in f.torch_rnn_seconds.items()},
        host=profile.name,
    )


def floors_given(dispatch_seconds: float, lead_seconds: float = 0.0) -> Floors:
    """One floor for every op that launches a kernel (views and no-kernel ops: 0), from the user."""
    return Floors(
        source=f"--dispatch-us {dispatch_seconds * 1e6:g} (given, not measured)",
        kernel_seconds=dispatch_seconds,
        lead_seconds=lead_seconds,
    )


def pipeline_makespan(host: Sequence[float], device: Sequence[float], lead: float = 0.0) -> float:
    """Exact minimum makespan of the in-order pipeline above (host[i] = a_i, device[i] = d_i)."""
    done = 0.0  # C_{i-1}
    dispatched = 0.0  # A_{i-1}
    for a, d in zip(host, device, strict=True):
        done = max(done, dispatched - lead) + d
        dispatched += a
    return max(done, dispatched - lead)


@dataclass(frozen=True, slots=True)
class EagerHost:
    bound: Bound
    ops: int  # eager ops counted (views and no-kernel ops included)
    views: int
    dispatch_seconds: float  # A_n
    device_seconds: float  # sum of the device floors
    source: str
    lead_seconds: float
    modules: int = 0  # nn.Module calls charged
    host: str = ""  # the host profile of the floors ("": given by --dispatch-us)
    classed: int = 0  # calls whose floor an argument class raised

    def describe(self) -> str:
        whose = f"host profile {self.host}" if self.host else "dispatch floor given"
        return (
            f"eager_host: {whose}, {self.ops} eager op{'' if self.ops == 1 else 's'} as PyTorch runs them ({self.views} without a kernel) in "
            f"{self.modules} nn.Module calls"
            + (f", {self.classed} priced by their argument class" if self.classed else "")
            + f"; host head start {self.lead_seconds * 1e6:.1f} us; {self.source}"
        )


@dataclass(frozen=True, slots=True)
class Stages:
    """The two stages of the pipeline, per eager op in program order: its ATen name, whether it
    launches a kernel, and its device floor d_i; `calls` what its host floor depends on (module
    calls, a recurrent op's shape). Entry 0 is the device work no call accounts for (op "", no
    dispatch)."""

    ops: tuple[str, ...]
    launches: tuple[bool, ...]
    device: tuple[float, ...]
    calls: tuple[HostCall, ...] = ()

    def host(self, floors: Floors) -> list[float]:
        """a_i of every entry under `floors` (entry 0: no dispatch; host_floors)."""
        calls = self.calls or tuple(HostCall(op, k) for op, k in zip(self.ops[1:], self.launches[1:]))
        return [0.0, *host_floors(calls, floors)]


def eager_stages(
    analysis: Analysis,
    calls: Iterable[EagerCall],
    device_floors: Mapping[int, float] | None = None,
) -> Stages:
    """The pipeline stages of `analysis`'s program, run as the eager `calls` (in program order).

    d_i is the unfused bound of the op instance call i became (raised to `device_floors[instance]`
    where a recurrence's critical path is longer). Device work no call accounts for (statements
    without an origin, the unfused bound's unattributed traffic) is put first with no dispatch: the
    position that lowers the makespan most, so the bound stays one."""
    device_floors = device_floors or {}
    rows = {op.instance: op for op in analysis.ops if op.instance is not None}
    used: set[int] = set()
    ops, launches, device, hosts = [""], [False], [], []
    for call in calls:
        row = rows.get(call.instance) if call.instance is not None and call.instance not in used else None
        d = 0.0
        if row is not None:
            used.add(row.instance)  # type: ignore[arg-type]
            d = max(row.seconds, device_floors.get(row.instance, 0.0))  # type: ignore[arg-type]
        ops.append(call.op)
        launches.append(row is not None and row.launch_seconds > 0)
        hosts.append(HostCall(call.op, launches[-1], getattr(call, "modules", ()), getattr(call, "rnn", ()),
                              getattr(call, "features", frozenset())))
        device.append(d)
    rest = [op for op in analysis.ops if op.instance is None or op.instance not in used]
    front = sum(max(op.seconds, device_floors.get(op.instance, 0.0) if op.instance is not None else 0.0) for op in rest)
    front += analysis.unfused.seconds - sum(op.seconds for op in analysis.ops)  # unattributed traffic
    return Stages(tuple(ops), tuple(launches), (max(0.0, front), *device), tuple(hosts))


def eager_host(
    analysis: Analysis,
    calls: Iterable[EagerCall],
    floors: Floors,
    device_floors: Mapping[int, float] | None = None,
) -> EagerHost:
    """The eager@host bound of `analysis`'s program, run as the eager `calls` (eager_stages)."""
    stages = eager_stages(analysis, calls, device_floors)
    host = stages.host(floors)
    seconds = pipeline_makespan(host, stages.device, floors.lead_seconds)
    device_total = sum(stages.device)
    views = sum(not k for k in stages.launches[1:])
    u = analysis.unfused
    bound = Bound(
        level=Level.EAGER_HOST,
        seconds=seconds,
        bottleneck="dispatch" if seconds > device_total * (1 + 1e-12) else u.bottleneck,  # type: ignore[arg-type]
        compute_seconds=u.compute_seconds,
        memory_seconds=u.memory_seconds,
        launch_seconds=u.launch_seconds,
        binding_unit=u.binding_unit,
    )
    modules = len({key for c in stages.calls for key, _ in c.modules})
    classed = sum(floors.floor(c.op, c.launches, c.rnn, c.features) > floors.floor(c.op, c.launches, c.rnn) for c in stages.calls)
    return EagerHost(bound, len(host) - 1, views, sum(host), device_total, floors.source, floors.lead_seconds, modules,
                     floors.host, classed)
