"""Finding the definitions of a folder and turning each (definition, workload) into a KernelBench-format
problem file, so that the suite runner of solar.kernelbench (isolated workers, timeouts, resume, Ray)
bounds them unchanged: one trace per workload.

Layouts: a folder per definition (`NAME/definition.json` beside `NAME/workload.jsonl`, as
SOL-ExecBench ships them), or FlashInfer-Trace's `definitions/**/NAME.json` with
`workloads/**/NAME.jsonl`. DIR may also be one definition's folder.

A problem file is the reference source, verbatim (so its line numbers are the reference's), followed
by a harness: `Model.forward` calls `run(...)` with the tensor inputs and the workload's scalars,
`get_inputs()` makes every tensor input at its workload shape (values are irrelevant to a bound:
random, safetensors and custom inputs alike are built as tensors of the right shape and dtype — the
analysis never allocates them — and `custom` ones come from the definition's own
custom_inputs_entrypoint, as the benchmarks' evaluators make them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from solar.definitions.schema import (
    Definition,
    DefinitionError,
    Workload,
    axis_values,
    load_definition,
    parse_workloads,
    shape_of,
)
from solar.errors import UsageError
from solar.kernelbench.problems import Problem
from solar.kernelbench.results import write_file
from solar.userfiles import read_text

DEFINITION_FILE = "definition.json"
WORKLOAD_FILE = "workload.jsonl"
#: the folder under OUT holding the generated problem files.
PROBLEMS_DIR = "problems"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_HARNESS_NAMES = ("Model", "get_inputs", "get_init_inputs")


@dataclass(frozen=True)
class Case:
    """One (definition, workload) with every axis' value and its problem file (relative to OUT)."""

    definition: Definition
    workload: Workload
    axes: dict[str, int]
    rel: str


@dataclass(frozen=True)
class Entry:
    definition: Definition
    workloads: tuple[Workload, ...]
    workload_path: Path
    copies: tuple[Path, ...] = ()  # other definition files holding the same definition and workloads


def _pairs(root: Path) -> list[tuple[Path, Path]]:
    """(definition file, workload file) pairs under ROOT, in a stable order."""
    if (root / DEFINITION_FILE).is_file():
        return [(root / DEFINITION_FILE, root / WORKLOAD_FILE)]
    pairs = [(p, p.parent / WORKLOAD_FILE) for p in sorted(root.rglob(DEFINITION_FILE))]
    if (root / "definitions").is_dir():
        workloads = {p.stem: p for p in sorted((root / "workloads").rglob("*.jsonl"))}
        for p in sorted((root / "definitions").rglob("*.json")):
            pairs.append((p, workloads.get(p.stem, root / "workloads" / f"{p.stem}.jsonl")))
    return pairs


def find_definitions(root: str | Path, pattern: str | None = None) -> list[Entry]:
    """Every definition under ROOT (only those whose name matches the glob `pattern`) with its
    workloads; a malformed file is a DefinitionError, a folder without definitions a UsageError.
    A definition found again with the same workloads (a benchmark ships one per kernel language) is
    read once, the other files kept in `copies`; one name with two different contents is refused."""
    import fnmatch

    root = Path(root)
    if not root.is_dir():
        raise UsageError(f"{root}: no such folder; pass a folder of definitions (NAME/definition.json + workload.jsonl)")
    entries: dict[str, Entry] = {}
    for dpath, wpath in _pairs(root):
        d = load_definition(dpath)
        if pattern and not fnmatch.fnmatch(d.name, pattern):
            continue
        if not wpath.is_file():
            raise DefinitionError(f"{dpath}: no workloads file {wpath}; write one workload per line there")
        text = read_text(wpath, "a workload JSONL file", DefinitionError)
        entry = Entry(d, tuple(parse_workloads(text, wpath, d)), wpath)
        first = entries.get(d.name)
        if first is None:
            entries[d.name] = entry
            continue
        first_path = first.definition.path
        if replace(d, path=first_path) != first.definition:
            what = "definitions"
        elif entry.workloads != first.workloads:
            what = "workloads"
        else:
            entries[d.name] = replace(first, copies=(*first.copies, dpath))
            continue
        raise DefinitionError(f"{dpath}: definition {d.name!r} is also in {first_path}, with other {what}; give one of them another name or pass --definitions to pick")
    if not entries:
        what = f" named like {pattern!r}" if pattern else ""
        raise UsageError(f"{root}: no definitions{what}; expected NAME/definition.json with NAME/workload.jsonl, or definitions/ and workloads/ folders")
    return list(entries.values())


def copies_note(entry: Entry) -> str | None:
    """The line saying a definition was found more than once and read once (None if it was not)."""
    if not entry.copies:
        return None
    others = ", ".join(str(p) for p in entry.copies)
    return f"definition {entry.definition.name!r} in {entry.definition.path} is also in {others} (same definition and workloads): read once"


def file_stem(text: str, what: str, where: Path) -> str:
    """`text` as a file name under OUT/problems/: characters other than letters, digits, '.', '_'
    and '-' become '_'; a name that would still lead elsewhere ('', '.', '..', a leading '.') is refused."""
    stem = _SAFE.sub("_", text)
    if not stem or stem.startswith("."):
        raise DefinitionError(f"{where}: {what} {text!r} cannot name a file under OUT/problems/ (it would leave the folder or hide the file); rename it with letters, digits, '_', '-' or '.' not first")
    return stem


def cases(entries: list[Entry]) -> list[Case]:
    """Every workload of every definition with its axis values (constraints checked now)."""
    out = []
    for e in entries:
        for w in e.workloads:
            d = e.definition
            rel = f"{file_stem(d.name, 'definition name', d.path)}/{file_stem(w.uuid, 'workload uuid', e.workload_path)}.py"
            out.append(Case(e.definition, w, axis_values(e.definition, w), rel))
    seen: dict[str, Case] = {}
    for c in out:
        if c.rel in seen:
            raise DefinitionError(f"{c.definition.path}: workloads {seen[c.rel].workload.uuid!r} and {c.workload.uuid!r} give the same file name {c.rel}; make their uuids differ in letters or digits")
        seen[c.rel] = c
    return out


def harness(case: Case) -> str:
    """The KernelBench-format problem file of one case (reference source + harness)."""
    d, w = case.definition, case.workload
    defined = set(re.findall(r"^(?:def|class)\s+(\w+)", d.reference, re.MULTILINE))
    clash = sorted(defined & set(_HARNESS_NAMES))
    if clash:
        raise DefinitionError(f"{d.path}: the reference defines {clash[0]!r}, a name the KernelBench harness needs; rename it")
    tensors = [s for s in d.inputs if s.shape is not None]
    params = [f"in{i}" for i in range(len(tensors))]
    args, k = [], 0
    for spec in d.inputs:
        if spec.shape is None:
            args.append(repr(w.source(spec.name).value))
        else:
            args.append(params[k])
            k += 1
    scalars = {s.name: w.source(s.name).value for s in d.inputs if s.shape is None}
    custom = [s.name for s in tensors if w.source(s.name).kind == "custom"]
    makers = []
    for spec in tensors:
        shape = shape_of(spec, case.axes)
        if spec.name in custom:
            makers.append(f"_custom[{spec.name!r}]")
        else:
            makers.append(f"_solar_tensor({shape!r}, {spec.dtype!r})")
    lines = [
        "",
        "",
        f"# ---- harness written by `solar definitions`: definition {d.name!r}, workload {w.uuid!r}",
        f"# axes {case.axes}",
        "import torch as _solar_torch",
        "",
        "",
        "def _solar_tensor(shape, dtype):",
        "    dt = getattr(_solar_torch, dtype, None)",
        "    if not isinstance(dt, _solar_torch.dtype):",
        "        raise TypeError(f'this torch has no dtype {dtype}; solar cannot trace it')",
        "    if dt.is_floating_point and dt.itemsize >= 2:",
        "        return _solar_torch.randn(shape, dtype=dt)",
        "    return _solar_torch.zeros(shape, dtype=dt)",
        "",
        "",
        "class Model(_solar_torch.nn.Module):",
        f"    def forward(self{''.join(', ' + p for p in params)}):",
        f"        return run({', '.join(args)})",
        "",
        "",
        "def get_inputs():",
    ]
    if custom:
        env = {**case.axes, **scalars}
        lines.append(f"    _custom = {d.custom_inputs_entrypoint}({env!r}, _solar_torch.device('cpu'))")
        lines.append(f"    _missing = [n for n in {custom!r} if n not in _custom]")
        lines.append("    if _missing:")
        lines.append(f"        raise KeyError(f'{d.custom_inputs_entrypoint}() made no input {{_missing[0]}}')")
    lines.append(f"    return [{', '.join(makers)}]")
    lines += ["", "", "def get_init_inputs():", "    return []", ""]
    return d.reference.rstrip("\n") + "\n" + "\n".join(lines)


def write_problems(all_cases: list[Case], out: Path) -> list[Problem]:
    """Write each case's problem file under OUT/problems/ (unchanged files are left alone) and
    return them as runner problems (relative names `DEFINITION/UUID.py`, no level)."""
    problems = []
    folder = (out / PROBLEMS_DIR).resolve()
    for c in all_cases:
        path = out / PROBLEMS_DIR / c.rel
        if folder not in path.resolve().parents:  # file_stem keeps names inside; a link may not
            raise DefinitionError(f"{path}: leads outside {out / PROBLEMS_DIR}; remove what is there or pass another --out")
        text = harness(c)
        if not (path.is_file() and path.read_text(encoding="utf-8") == text):
            write_file(path, text)
        problems.append(Problem(c.rel, None, path))
    return problems
