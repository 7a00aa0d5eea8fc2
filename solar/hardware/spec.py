"""GPU hardware specs: the strict model of one `hardware_specs/*.yaml` file, loading and lookup.

Every number is a `Sourced` value (the number and where it comes from); units live in key names.
Backends read these facts through the properties at the end of `HardwareSpec`, never by GPU name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from solar.bounded import digits_problem
from solar.errors import SpecError
from solar.userfiles import read_text

# The spec files: `hardware_specs/` of the source tree, reached through the package's `specs` link
# (a wheel holds them as package data in that folder).
SPEC_DIR = (Path(__file__).parent / "specs").resolve()

# Dense tensor-core peaks per operand dtype (int rates are ops/s), and non-tensor (SIMT) peaks.
TensorKey = Literal["fp64", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4"]
SimtKey = Literal["fp64", "fp32", "fp16", "bf16"]

_EXAMPLE = "hardware_specs/H100-SXM.yaml is a complete example"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sourced(_Strict):
    """A positive number and the document, derivation or measurement it comes from."""

    value: Annotated[float, Field(gt=0, strict=True, allow_inf_nan=False)]
    source: Annotated[str, Field(strict=True, min_length=1)]

    @field_validator("source")
    @classmethod
    def _not_blank(cls, source: str) -> str:
        if not source.strip():
            raise ValueError("source must name a datasheet, a derivation or a measurement")
        return source


class MemoryLevel(_Strict):
    """One level of the memory hierarchy: capacity, and peak bandwidth where a source gives one."""

    capacity_bytes: Sourced
    bandwidth_bytes_per_s: Sourced | None = None


class DramLevel(MemoryLevel):
    """Device memory: its bandwidth is the memory bound's denominator, so it is required."""

    bandwidth_bytes_per_s: Sourced


class DeviceFloors(_Strict):
    """Device-side floors measured by `solar calibrate` on one GPU model (solar/validate/dispatch.py,
    benchmarks/device_floors.py): valid for that GPU model, any host (docs/BOUNDS.md §18, §20)."""

    cuda_graph_kernel_seconds: Sourced  # least interval per dependent kernel replayed from a CUDA graph
    grid_sync_seconds: Sourced  # least time of one grid-wide synchronisation (recurrence floor)
    grid_barrier_seconds: Sourced | None = None


class HardwareSpec(_Strict):
    """Datasheet facts about one GPU (dense peaks at the boost clock), each with its source."""

    name: Annotated[str, Field(strict=True, min_length=1)]
    aliases: tuple[str, ...]
    architecture: Annotated[str, Field(strict=True, min_length=1)]
    compute_capability: Annotated[str, Field(strict=True, pattern=r"^\d+\.\d+$")]
    sm_count: Sourced
    boost_clock_mhz: Sourced
    dram: DramLevel
    l2: MemoryLevel
    l1_shared_per_sm: MemoryLevel  # the unified L1 / texture / shared-memory SRAM of one SM
    shared_memory_per_sm: MemoryLevel  # the largest shared-memory carve-out of that SRAM
    registers_per_sm: MemoryLevel
    tensor_memory_per_sm: MemoryLevel | None = None  # Blackwell TMEM (tcgen05 accumulators)
    # Small stores with no datasheet capacity (uniform and predicate registers, constant-cache
    # working set): a sourced upper allowance, so that S is never below all on-chip storage.
    other_storage_per_sm: MemoryLevel | None = None
    tensor_core_flops_per_s: dict[TensorKey, Sourced]
    simt_flops_per_s: dict[SimtKey, Sourced]
    sfu_ops_per_s: Sourced
    min_kernel_seconds: Sourced
    calibrated: dict[str, Sourced] = {}
    device_floors: DeviceFloors | None = None  # measured device floors (calibrated specs only)

    @field_validator("aliases")
    @classmethod
    def _aliases_distinct(cls, aliases: tuple[str, ...]) -> tuple[str, ...]:
        folded = [a.strip().casefold() for a in aliases]
        if any(not a for a in folded):
            raise ValueError("an alias is empty")
        if len(set(folded)) != len(folded):
            raise ValueError("aliases repeat (they are compared case-insensitively)")
        return aliases

    @field_validator("simt_flops_per_s")
    @classmethod
    def _has_fp32(cls, rates: dict[str, Sourced]) -> dict[str, Sourced]:
        if "fp32" not in rates:
            raise ValueError("the fp32 rate is required")
        return rates

    @field_validator("shared_memory_per_sm")
    @classmethod
    def _carveout_fits(cls, shared: MemoryLevel, info: Any) -> MemoryLevel:
        unified = info.data.get("l1_shared_per_sm")
        if unified is not None and shared.capacity_bytes.value > unified.capacity_bytes.value:
            raise ValueError("the shared-memory carve-out exceeds l1_shared_per_sm, which holds it")
        return shared

    # -- what the backends read ------------------------------------------------------------------

    @property
    def sm_clock_hz(self) -> float:
        return self.boost_clock_mhz.value * 1e6

    @property
    def dram_bytes_per_s(self) -> float:
        return self.dram.bandwidth_bytes_per_s.value

    @property
    def l2_bytes(self) -> float:
        return self.l2.capacity_bytes.value

    @property
    def sm_storage_bytes(self) -> float:
        """On-chip data storage of one SM: the whole unified L1/shared SRAM (not only the largest
        shared-memory carve-out: data cached in L1 is on chip too), the register file, the tensor
        memory where the SM has one, and the allowance for small undocumented stores."""
        optional = (self.tensor_memory_per_sm, self.other_storage_per_sm)
        return (
            self.l1_shared_per_sm.capacity_bytes.value
            + self.registers_per_sm.capacity_bytes.value
            + sum(level.capacity_bytes.value for level in optional if level is not None)
        )

    @property
    def onchip_bytes(self) -> float:
        """S of the cache-aware bound: L2 plus every SM's storage. A larger S only lowers the
        cache-aware bound, so every data store the vendor documents is included."""
        return self.l2_bytes + self.sm_count.value * self.sm_storage_bytes

    def tensor_rate(self, key: str) -> float | None:
        """Dense tensor-core peak for dtype `key` (flops/s; int: ops/s); None: no tensor path."""
        rate = self.tensor_core_flops_per_s.get(key)  # type: ignore[call-overload]
        return None if rate is None else rate.value

    def simt_rate(self, key: str) -> float | None:
        """Non-tensor peak for `key` (flops/s, an FMA counts 2); None where the spec gives none."""
        rate = self.simt_flops_per_s.get(key)  # type: ignore[call-overload]
        return None if rate is None else rate.value


# -- loading ------------------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """Strict YAML for spec files: a key given twice is an error (YAML would keep the last one
    silently), anchors and aliases are refused (a spec writes every value out), and YAML 1.1's
    float syntax is widened to accept `989.4e12` and `1e-6`."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "an alias (*name); write the value out instead", self.peek_event().start_mark
            )
        if getattr(self.peek_event(), "anchor", None):
            raise yaml.composer.ComposerError(
                None, None, "an anchor (&name); write every value out instead", self.peek_event().start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:
                    continue  # an unhashable key: SafeLoader reports it
                if first is not key_node:
                    raise yaml.constructor.ConstructorError(
                        None, None,
                        f"duplicate key {key!r} (first given at line {first.start_mark.line + 1}); "
                        "keep one",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: Any) -> Any:
        """An integer, or an `_Oversized` marker for one of more digits than solar.bounded allows
        (reported with its key by `_oversized`; Python's int() would fail past 4300 digits)."""
        problem = digits_problem(str(self.construct_scalar(node)))
        return _Oversized(problem) if problem else super().construct_yaml_int(node)


@dataclass(frozen=True)
class _Oversized:
    problem: str


def _oversized(data: Any) -> str | None:
    """`key.path: problem` of the first `_Oversized` number of a loaded YAML document, in document
    order (walked without recursion), or None."""
    stack: list[tuple[str, Any]] = [("<top level>", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, _Oversized):
            return f"{where}: {value.problem}"
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, sub in reversed(list(items)):  # popped in document order
            if isinstance(key, _Oversized):
                return f"{where}: a key is {key.problem}"
            name = f"[{key}]" if isinstance(value, list) else str(key)
            stack.append((name if where == "<top level>" else f"{where}.{name}", sub))
    return None


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)$"),
    list("-+0123456789."),
)


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(SPEC_DIR.parent).as_posix()
    except ValueError:
        return str(path)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _describe(error: Any) -> tuple[str, str]:
    """(`key.path: what is wrong`, what to do) for one pydantic error."""
    loc = list(error["loc"])
    is_key = bool(loc) and loc[-1] == "[key]"
    if is_key:
        loc = loc[:-1]
    where = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc) or "<top level>"
    kind = error["type"]
    got = _one_line(repr(error.get("input")))
    got = got if len(got) <= 60 else got[:57] + "..."
    if is_key:
        expected = error.get("ctx", {}).get("expected", "")
        return f"{where}: unknown key (allowed: {expected})", "remove it or fix its spelling"
    if kind == "missing":
        return f"{where}: field required", "add it"
    if kind == "extra_forbidden":
        return f"{where}: unknown key", "remove it or fix its spelling"
    if kind == "greater_than":
        return f"{where}: must be > {error['ctx']['gt']} (got {got})", "fix the value"
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message} (got {got})", "fix the value"


# Physical range of each number (inclusive), by key: wider than any GPU made or planned, so that a
# value outside is a typo or a wrong unit (MHz for Hz, bits for bytes), never a real part.
# A key ending in `.*` covers every entry of that mapping.
PHYSICAL_RANGES: dict[str, tuple[float, float, str]] = {
    "sm_count": (1, 4096, "SMs"),
    "boost_clock_mhz": (10, 10_000, "MHz"),
    "dram.capacity_bytes": (1e6, 1e15, "bytes"),
    "dram.bandwidth_bytes_per_s": (1e9, 1e16, "bytes/s"),
    "l2.capacity_bytes": (1e3, 1e11, "bytes"),
    "l2.bandwidth_bytes_per_s": (1e9, 1e17, "bytes/s"),
    "l1_shared_per_sm.capacity_bytes": (1e3, 1e9, "bytes"),
    "l1_shared_per_sm.bandwidth_bytes_per_s": (1e8, 1e16, "bytes/s"),
    "shared_memory_per_sm.capacity_bytes": (1e3, 1e9, "bytes"),
    "shared_memory_per_sm.bandwidth_bytes_per_s": (1e8, 1e16, "bytes/s"),
    "registers_per_sm.capacity_bytes": (1e3, 1e9, "bytes"),
    "registers_per_sm.bandwidth_bytes_per_s": (1e8, 1e17, "bytes/s"),
    "tensor_memory_per_sm.capacity_bytes": (1e3, 1e9, "bytes"),
    "tensor_memory_per_sm.bandwidth_bytes_per_s": (1e8, 1e17, "bytes/s"),
    "other_storage_per_sm.capacity_bytes": (1, 1e9, "bytes"),
    "other_storage_per_sm.bandwidth_bytes_per_s": (1e8, 1e17, "bytes/s"),
    "tensor_core_flops_per_s.*": (1e9, 1e19, "flop/s"),
    "simt_flops_per_s.*": (1e9, 1e18, "flop/s"),
    "sfu_ops_per_s": (1e8, 1e18, "ops/s"),
    "min_kernel_seconds": (1e-9, 1e-3, "s"),
    "calibrated.*": (1e-12, 1e19, "(its unit)"),
}
# Numbers that count things.
INTEGER_KEYS = frozenset({"sm_count"})


def _sourced_values(spec: HardwareSpec) -> list[tuple[str, str, float]]:
    """(key, range key, value) of every Sourced number in a spec."""
    out = []
    for field, value in spec:
        if isinstance(value, Sourced):
            out.append((field, field, value.value))
        elif isinstance(value, MemoryLevel):
            for sub, level in value:
                if isinstance(level, Sourced):
                    out.append((f"{field}.{sub}", f"{field}.{sub}", level.value))
        elif isinstance(value, dict):
            out += [(f"{field}.{k}", f"{field}.*", v.value) for k, v in value.items()]
    return out


def physical_problem(spec: HardwareSpec) -> str | None:
    """`key.value: ...` for the first number outside its physical range (None: all in range)."""
    for key, range_key, value in _sourced_values(spec):
        lo, hi, unit = PHYSICAL_RANGES[range_key]
        if not lo <= value <= hi:
            return f"{key}.value: {value:g} is outside the physical range {lo:g}..{hi:g} {unit}"
        if range_key in INTEGER_KEYS and value != int(value):
            return f"{key}.value: {value:g} is not a whole number"
    return None


def read_yaml(path: str | Path, what: str, example: str = _EXAMPLE) -> tuple[Any, str]:
    """The strict-YAML data of `path` (a `what`, e.g. "a spec YAML file") and the path as messages
    show it; any problem is a one-line SpecError naming the file and saying what to do."""
    path = Path(path)
    shown = _display(path)
    try:
        text = read_text(path, what, SpecError)
    except SpecError as exc:
        raise SpecError(str(exc).replace(str(path), shown, 1)) from None
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        syntax = isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError, yaml.reader.ReaderError))
        kind = "YAML syntax error" if syntax else "YAML error"
        raise SpecError(
            _one_line(f"{shown}{where}: {kind}: {problem}; fix the YAML at that line")
        ) from None
    except RecursionError:
        raise SpecError(f"{shown}: YAML nested too deeply for a spec file; {example}") from None
    if not isinstance(data, dict):
        raise SpecError(f"{shown}: <top level>: must be a mapping of keys; {example}")
    oversized = _oversized(data)
    if oversized:
        raise SpecError(f"{shown}: {oversized}; fix the value ({example})")
    return data, shown


def validated(model: Any, data: Any, shown: str, example: str = _EXAMPLE) -> Any:
    """`model.model_validate(data)`; a problem is a one-line SpecError naming the file and key."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        problem, action = _describe(errors[0])
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SpecError(_one_line(f"{shown}: {problem}{more}; {action}; {example}")) from None


def load_named(path: str | Path, model: Any, what: str, example: str = _EXAMPLE,
               physical: Any = None) -> tuple[Any, str]:
    """A spec-style YAML file read and validated as `model` (a `what`), its numbers checked by
    `physical(obj)` (a problem's text, or None) and its `name` checked against the file name; the
    object and the path as messages show it. Any problem is a one-line SpecError."""
    path = Path(path)
    data, shown = read_yaml(path, what, example)
    obj = validated(model, data, shown, example)
    problem = physical(obj) if physical is not None else None
    if problem:
        raise SpecError(f"{shown}: {problem}; fix the value ({example})")
    if obj.name != path.stem:
        raise SpecError(
            f"{shown}: name: {obj.name!r} differs from the file name; "
            f"set name: {path.stem} or rename the file to {obj.name}.yaml"
        )
    return obj, shown


def load_spec_file(path: str | Path) -> HardwareSpec:
    """Read and validate one spec YAML; any problem is a one-line SpecError naming file and key."""
    return load_named(path, HardwareSpec, "a spec YAML file", physical=physical_problem)[0]


CALIBRATED_DIR = SPEC_DIR / "calibrated"


@functools.cache
def calibrated_spec(name: str) -> HardwareSpec | None:
    """The calibrated variant of spec `name` (hardware_specs/calibrated/NAME.yaml, written by
    `solar calibrate`), or None where that GPU has not been calibrated."""
    path = CALIBRATED_DIR / f"{name}.yaml"
    return load_spec_file(path) if path.is_file() else None


@functools.cache
def list_specs() -> tuple[HardwareSpec, ...]:
    """Every spec in SPEC_DIR, sorted by name."""
    specs = (_load_named(p) for p in _spec_files().values())
    return tuple(sorted(specs, key=lambda s: s.name))


@functools.cache
def _spec_files() -> dict[str, Path]:
    """The spec files of SPEC_DIR by file name without .yaml (each spec's name)."""
    return {p.stem: p for p in SPEC_DIR.glob("*.yaml")}


@functools.cache
def _load_named(path: Path) -> HardwareSpec:
    """A spec file of SPEC_DIR, read once (get_spec by name and list_specs give the same object)."""
    return load_spec_file(path)


def get_spec(name_or_path: str) -> HardwareSpec:
    """A spec by exact name (any case), by a unique alias, or from a path to a spec YAML."""
    if name_or_path.endswith((".yaml", ".yml")) or Path(name_or_path).is_file():
        return load_spec_file(name_or_path)
    named = _spec_files().get(name_or_path.strip())
    if named is not None:  # a spec's exact name: its file alone (load_spec_file checks they agree)
        return _load_named(named)
    wanted = name_or_path.strip().casefold()
    specs = list_specs()
    for spec in specs:
        if spec.name.casefold() == wanted:
            return spec
    matches = [s for s in specs if wanted in (a.casefold() for a in s.aliases)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(s.name for s in matches)
        raise SpecError(f"GPU name {name_or_path!r} is ambiguous: {names}; pass one of these names")
    known = ", ".join(s.name for s in specs)
    raise SpecError(f"unknown GPU {name_or_path!r}; known: {known} (or pass a path to a spec YAML)")
