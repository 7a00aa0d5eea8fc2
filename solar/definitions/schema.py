"""The definition + workload format shared by SOL-ExecBench and FlashInfer-Bench, read from its public
schema documentation (flashinfer-bench docs/flashinfer-trace/{definition,workload}.mdx, SOL-ExecBench
docs/{definition,workload}.md): frozen dataclasses and one loader, every malformed field one line
naming the file, the field and what to write instead.

A definition names symbolic axes (`const` with a value, `var` bound by each workload, `expr` computed
from other axes), input and output tensors whose shapes are lists of axis names (`null`: a Python
scalar), `constraints` (Python expressions over the axes), a `reference` Python source defining
`run(...)` (code: it runs where a model file runs, in the analysis worker, never when it is read),
and optionally `custom_inputs_entrypoint`, a function of the reference that makes the inputs a
workload marks `custom`. A workload binds every `var` axis and says where each input comes
from (`random`, `scalar` with a value, `safetensors`, `custom`)."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solar import bounded
from solar.errors import SolarError
from solar.userfiles import read_text


class DefinitionError(SolarError):
    """A definition or workload file that does not follow the schema."""


#: the dtypes the schema allows, as torch names (the same strings).
DTYPES = (
    "float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1",
    "float4_e2m1fn_x2", "int64", "int32", "int16", "int8", "uint8", "bool",
)
AXIS_TYPES = ("const", "var", "expr")
INPUT_TYPES = ("random", "scalar", "safetensors", "custom")


@dataclass(frozen=True, slots=True)
class Axis:
    """One symbolic dimension: `value` for const, `expression` for expr, neither for var."""

    name: str
    kind: str  # const | var | expr
    value: int | None = None
    expression: str | None = None


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """A named tensor: its shape as axis names (None: a Python scalar; (): a 0-d tensor), dtype."""

    name: str
    shape: tuple[str, ...] | None
    dtype: str


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    op_type: str | None
    axes: tuple[Axis, ...]
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    reference: str
    constraints: tuple[str, ...]
    custom_inputs_entrypoint: str | None
    path: Path
    tags: tuple[str, ...] = ()

    def axis(self, name: str) -> Axis:
        return next(a for a in self.axes if a.name == name)


@dataclass(frozen=True, slots=True)
class InputSource:
    """Where a workload's input comes from: `kind` in INPUT_TYPES; `value` for scalars."""

    kind: str
    value: Any = None


@dataclass(frozen=True, slots=True)
class Workload:
    uuid: str
    axes: tuple[tuple[str, int], ...]  # the var axes as given
    inputs: tuple[tuple[str, InputSource], ...]
    line: int  # 1-based line of workload.jsonl

    def source(self, name: str) -> InputSource:
        return dict(self.inputs)[name]


# ---- arithmetic over axis values (expr axes and constraints) --------------------------------------


def evaluate(text: str, env: dict[str, int], where: str) -> Any:
    """Evaluate an axis expression or constraint with solar.bounded's evaluator: numbers, axis
    names, + - * / // % **, unary signs, comparisons (chained), and / or / not, every value within
    its limits. Anything else is a DefinitionError."""
    return bounded.evaluate(text, env, where, DefinitionError)


# ---- reading files -------------------------------------------------------------------------------


def _json_object(text: str, where: str) -> dict:
    data = bounded.loads_json(text, where, DefinitionError)
    if not isinstance(data, dict):
        raise DefinitionError(f"{where}: expected a JSON object, got {type(data).__name__}")
    return data


def _field(data: dict, key: str, kind: type | tuple[type, ...], where: str, required: bool = True) -> Any:
    if key not in data or data[key] is None:
        if required:
            raise DefinitionError(f"{where}: no {key!r}; the schema requires it")
        return None
    value = data[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        names = "/".join(k.__name__ for k in kinds)
        raise DefinitionError(f"{where}: {key!r} must be {names}, got {type(value).__name__}")
    return value


def _axis(name: str, data: Any, where: str) -> Axis:
    w = f"{where}: axes.{name}"
    if not isinstance(data, dict):
        raise DefinitionError(f"{w}: expected an object with a 'type' (const, var or expr)")
    kind = data.get("type")
    if kind not in AXIS_TYPES:
        raise DefinitionError(f"{w}: type {kind!r} is not one of {', '.join(AXIS_TYPES)}")
    if kind == "const":
        value = _field(data, "value", int, w)
        if value < 0:
            raise DefinitionError(f"{w}: value {value} is negative; an axis is a size")
        return Axis(name, kind, value=value)
    if kind == "expr":
        return Axis(name, kind, expression=_field(data, "expression", str, w))
    return Axis(name, kind)


def _tensor(name: str, data: Any, axes: set[str], where: str) -> TensorSpec:
    w = f"{where}: {name}"
    if not isinstance(data, dict) or "shape" not in data:
        raise DefinitionError(f"{w}: expected an object with 'shape' (axis names, or null) and 'dtype'")
    shape = data["shape"]
    if shape is not None:
        if not isinstance(shape, list) or not all(isinstance(s, str) for s in shape):
            raise DefinitionError(f"{w}: shape must be a list of axis names or null, got {shape!r}")
        unknown = [s for s in shape if s not in axes]
        if unknown:
            raise DefinitionError(f"{w}: shape names axis {unknown[0]!r}, which 'axes' does not define")
        shape = tuple(shape)
    dtype = _field(data, "dtype", str, w)
    if dtype not in DTYPES:
        raise DefinitionError(f"{w}: dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    return TensorSpec(name, shape, dtype)


def parse_definition(text: str, path: Path) -> Definition:
    where = str(path)
    data = _json_object(text, where)
    name = _field(data, "name", str, where)
    axes_data = _field(data, "axes", dict, where)
    axes = tuple(_axis(n, d, where) for n, d in axes_data.items())
    names = {a.name for a in axes}
    tensors = {}
    for group in ("inputs", "outputs"):
        specs = _field(data, group, dict, where)
        tensors[group] = tuple(_tensor(n, d, names, f"{where}: {group}") for n, d in specs.items())
    clash = {t.name for t in tensors["inputs"]} & {t.name for t in tensors["outputs"]}
    if clash:
        raise DefinitionError(f"{where}: {sorted(clash)[0]!r} is both an input and an output; rename one")
    constraints = _field(data, "constraints", list, where, required=False) or []
    if not all(isinstance(c, str) for c in constraints):
        raise DefinitionError(f"{where}: constraints must be a list of strings (Python expressions)")
    reference = _field(data, "reference", str, where)
    entry = _field(data, "custom_inputs_entrypoint", str, where, required=False)
    tags = _field(data, "tags", list, where, required=False) or []
    definition = Definition(
        name=name,
        op_type=_field(data, "op_type", str, where, required=False),
        axes=axes,
        inputs=tensors["inputs"],
        outputs=tensors["outputs"],
        reference=reference,
        constraints=tuple(constraints),
        custom_inputs_entrypoint=entry,
        path=path,
        tags=tuple(str(t) for t in tags),
    )
    _check_reference(definition)
    return definition


def _check_reference(d: Definition) -> None:
    """The reference parses and defines `run` (and the custom-inputs function when one is named)."""
    try:
        tree = ast.parse(d.reference, filename=f"{d.path}: reference")
    except SyntaxError as exc:
        raise DefinitionError(f"{d.path}: reference, line {exc.lineno}: {exc.msg}; the reference is Python code (it defines run(...))") from None
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if "run" not in defined:
        raise DefinitionError(f"{d.path}: the reference (Python code) defines no global function run(...); the schema's entry point is run")
    if d.custom_inputs_entrypoint and d.custom_inputs_entrypoint not in defined:
        raise DefinitionError(f"{d.path}: custom_inputs_entrypoint {d.custom_inputs_entrypoint!r} is not a function the reference (Python code) defines")


def load_definition(path: Path) -> Definition:
    return parse_definition(read_text(path, "a definition JSON file", DefinitionError), path)


def parse_workloads(text: str, path: Path, definition: Definition) -> list[Workload]:
    """The workloads of a JSONL file: bare workload objects, or traces holding one (`workload`)."""
    workloads, seen = [], set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        data = _json_object(line, where)
        if isinstance(data.get("workload"), dict):  # a trace: {"definition": ..., "workload": {...}}
            named = data.get("definition")
            if named is not None and named != definition.name:
                raise DefinitionError(f"{where}: a workload of definition {named!r} in the file of {definition.name!r}")
            data = data["workload"]
        workload = _workload(data, where, definition, number)
        if workload.uuid in seen:
            raise DefinitionError(f"{where}: uuid {workload.uuid!r} repeats an earlier line; each workload needs its own")
        seen.add(workload.uuid)
        workloads.append(workload)
    if not workloads:
        raise DefinitionError(f"{path}: no workloads; write one JSON object per line with 'uuid', 'axes', 'inputs'")
    return workloads


def _workload(data: dict, where: str, d: Definition, number: int) -> Workload:
    uuid = _field(data, "uuid", str, where)
    axes = _field(data, "axes", dict, where)
    var = {a.name for a in d.axes if a.kind == "var"}
    for name, value in axes.items():
        if name not in var:
            kinds = {a.name: a.kind for a in d.axes}
            what = f"a {kinds[name]} axis" if name in kinds else "no axis of the definition"
            raise DefinitionError(f"{where}: axes.{name} is {what}; a workload binds only var axes ({', '.join(sorted(var)) or 'none'})")
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise DefinitionError(f"{where}: axes.{name} must be a size (an integer >= 0), got {value!r}")
    missing = sorted(var - set(axes))
    if missing:
        raise DefinitionError(f"{where}: no value for var axis {missing[0]!r}; bind every var axis")
    inputs_data = _field(data, "inputs", dict, where, required=False) or {}
    inputs = []
    for spec in d.inputs:
        src = inputs_data.get(spec.name, {"type": "scalar" if spec.shape is None else "random"})
        if not isinstance(src, dict) or src.get("type") not in INPUT_TYPES:
            raise DefinitionError(f"{where}: inputs.{spec.name}: type must be one of {', '.join(INPUT_TYPES)}")
        kind = src["type"]
        if spec.shape is None and kind != "scalar":
            raise DefinitionError(f"{where}: inputs.{spec.name} is a scalar (shape null); give it {{\"type\": \"scalar\", \"value\": ...}}")
        if kind == "scalar" and not isinstance(src.get("value"), (int, float, bool)):
            raise DefinitionError(f"{where}: inputs.{spec.name}: a scalar needs a numeric 'value'")
        if kind == "scalar" and isinstance(src["value"], float) and not math.isfinite(src["value"]):
            raise DefinitionError(f"{where}: workload {uuid!r}: inputs.{spec.name}.value is {src['value']!r}; a scalar must be a finite number")
        if kind == "custom" and not d.custom_inputs_entrypoint:
            raise DefinitionError(f"{where}: inputs.{spec.name} is custom, but the definition names no custom_inputs_entrypoint")
        inputs.append((spec.name, InputSource(kind, src.get("value"))))
    unknown = sorted(set(inputs_data) - {t.name for t in d.inputs})
    if unknown:
        raise DefinitionError(f"{where}: inputs.{unknown[0]} is no input of the definition")
    return Workload(uuid, tuple(axes.items()), tuple(inputs), number)


def axis_values(d: Definition, w: Workload) -> dict[str, int]:
    """Every axis' value for a workload (const, the workload's var values, then expr axes in
    dependency order), with the constraints checked."""
    env: dict[str, int] = {a.name: a.value for a in d.axes if a.kind == "const"}
    env.update(dict(w.axes))
    where = f"{d.path}: workload {w.uuid}"
    pending = [a for a in d.axes if a.kind == "expr"]
    while pending:
        ready = [a for a in pending if _names(a.expression) <= set(env)]
        if not ready:
            raise DefinitionError(f"{where}: expr axes {', '.join(a.name for a in pending)} depend on each other or on unknown axes")
        for a in ready:
            value = evaluate(a.expression, env, f"{where}: axes.{a.name}")
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise DefinitionError(f"{where}: axes.{a.name} = {a.expression!r} is {value!r}, not a size")
            env[a.name] = value
            pending.remove(a)
    for c in d.constraints:
        if not evaluate(c, env, f"{where}: constraint"):
            shown = ", ".join(f"{k}={env[k]}" for k in sorted(_names(c) & set(env)))
            raise DefinitionError(f"{where}: constraint {c!r} does not hold ({shown}); fix the workload's axes")
    return env


def _names(text: str) -> set[str]:
    return bounded.names(text)


def shape_of(spec: TensorSpec, env: dict[str, int]) -> tuple[int, ...] | None:
    return None if spec.shape is None else tuple(env[s] for s in spec.shape)
