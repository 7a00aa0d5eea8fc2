"""The package's structure, checked from the code's own imports (docs/ARCHITECTURE.md): imports
point down the pipeline (no cycle outside solar/ir, imports inside functions only to defer heavy
dependencies), the report package is a leaf, nothing imports the CLI, one fact lives in one place
(level names, the precision policy), and modules are split by concept (no `*_extra`, no private
names imported across modules, no file over 1,000 lines)."""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SOLAR = Path(__file__).resolve().parents[1] / "solar"
MAX_LINES = 1000
MAX_LOCAL_IMPORTS = 80  # imports of solar modules inside functions (deferring torch, jax, ...)
CYCLES_ALLOWED_IN = "solar.ir"  # the IR's node, affine and printer modules print each other


@dataclass(frozen=True)
class Edge:
    source: str  # importing module
    target: str  # imported solar module
    names: tuple[str, ...]  # the names imported (`from m import a, b`)
    local: bool  # inside a function
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOLAR.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SOLAR.rglob("*.py"))}


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _resolve(name: str) -> str | None:
    """The solar module a dotted import names (`solar.ir.nodes.Program` -> `solar.ir.nodes`)."""
    modules = _modules()
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _enclosing_functions(tree: ast.Module) -> dict[ast.AST, bool]:
    inside: dict[ast.AST, bool] = {}

    def visit(node: ast.AST, in_fn: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside[child] = in_fn
            visit(child, in_fn or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return inside


@cache
def _edges() -> tuple[Edge, ...]:
    out = []
    for module, path in _modules().items():
        tree = _tree(path)
        inside = _enclosing_functions(tree)
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                pairs = [(a.name, ()) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package[: len(package) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                pairs = [(f"{base}.{a.name}", (a.name,)) for a in node.names]
            else:
                continue
            for name, names in pairs:
                target = _resolve(name) if name.split(".")[0] == "solar" else None
                if target and target != module:
                    out.append(Edge(module, target, names, inside[node], node.lineno))
    return tuple(out)


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in _edges():
        graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(_modules()):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_import_cycle_outside_the_ir():
    outside = [c for c in _cycles() if not all(_within(m, CYCLES_ALLOWED_IN) for m in c)]
    assert outside == []


def test_imports_inside_functions_only_defer_heavy_dependencies():
    local = sorted({f"{e.source}:{e.line} -> {e.target}" for e in _edges() if e.local})
    statements = {(e.source, e.line) for e in _edges() if e.local}
    assert len(statements) <= MAX_LOCAL_IMPORTS, "\n".join(local)


@pytest.mark.parametrize(
    "package, never",
    [
        ("solar.report", ("solar.api", "solar.validate", "solar.usecases", "solar.cli", "solar.commands", "solar.frontends")),
        ("solar.backends", ("solar.api", "solar.report", "solar.frontends", "solar.validate", "solar.usecases")),
        ("solar.lift", ("solar.api", "solar.report", "solar.frontends", "solar.backends")),
        ("solar.passes", ("solar.api", "solar.report", "solar.frontends", "solar.backends", "solar.lift")),
        ("solar.ir", ("solar.api", "solar.report", "solar.frontends", "solar.backends", "solar.lift", "solar.passes")),
        ("solar.hardware", ("solar.api", "solar.report", "solar.frontends", "solar.backends")),
    ],
)
def test_imports_point_down(package, never):
    wrong = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in _edges()
        if _within(e.source, package) and any(_within(e.target, n) for n in never)
    ]
    assert wrong == []


def test_nothing_imports_the_cli_or_the_package_root():
    wrong = [f"{e.source}:{e.line} imports {e.target}" for e in _edges() if e.target in ("solar.cli", "solar")]
    assert wrong == []


def test_no_private_name_imported_across_modules():
    wrong = [
        f"{e.source}:{e.line} imports {n} from {e.target}"
        for e in _edges()
        for n in e.names
        if n.startswith("_") and not n.startswith("__")
    ]
    assert wrong == []


def test_modules_are_named_for_a_concept_and_not_over_1000_lines():
    named_for_size = [m for m in _modules() if re.search(r"(_extra|_misc|utils|helpers)$", m)]
    assert named_for_size == []
    long = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def _level_names() -> set[str]:
    from solar.backends.levels import Level

    return {lv.value for lv in Level}


def test_level_names_are_written_only_in_the_level_table():
    names = _level_names()
    wrong = [
        f"{m}:{node.lineno} {node.value!r}"
        for m, p in _modules().items()
        if m != "solar.backends.levels"
        for node in ast.walk(_tree(p))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert wrong == []


def test_no_function_takes_the_precision_policy_beside_the_clock():
    """The precision policy and the clock travel inside Assumptions (solar.backends.assumptions)."""
    wrong = []
    for m, p in _modules().items():
        for node in ast.walk(_tree(p)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
                if {"precision", "clock_mhz"} <= names:
                    wrong.append(f"{m}:{node.lineno} {node.name}")
    assert wrong == []


def test_islpy_only_in_polyhedral():
    importing = [
        m for m, p in _modules().items()
        for node in ast.walk(_tree(p))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and any(n.split(".")[0] == "islpy" for n in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]))
    ]
    assert sorted(set(importing)) == ["solar.ir.polyhedral"]


def test_backends_do_not_read_the_program():
    hits = [
        f"{m}:{k}"
        for m, p in _modules().items()
        if _within(m, "solar.backends")
        for k, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\.program\b", line)
    ]
    assert hits == []


def test_the_checks_see_a_cycle_and_a_local_import(tmp_path, monkeypatch):
    """The graph this file checks is the real one: a planted cycle and a function-local import
    are found."""
    pkg = tmp_path / "solar"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from solar.a.y import f\n")
    (pkg / "a" / "y.py").write_text("def f():\n    from solar.a import x\n")
    monkeypatch.setattr(sys.modules[__name__], "SOLAR", pkg)
    for fn in (_modules, _edges, _tree):
        fn.cache_clear()
    try:
        assert _cycles() == [["solar.a.x", "solar.a.y"]]
        assert [(e.source, e.local) for e in _edges()] == [("solar.a.x", False), ("solar.a.y", True)]
    finally:
        monkeypatch.undo()
        for fn in (_modules, _edges, _tree):
            fn.cache_clear()
