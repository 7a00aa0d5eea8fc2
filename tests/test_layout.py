"""The package's layout rules (DESIGN, STYLE, issue #13): islpy is imported only by
solar/ir/polyhedral.py, the backends read the einsum graph (never `graph.program`), and no module
of solar/ is over 600 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SOLAR = Path(__file__).resolve().parents[1] / "solar"
MAX_LINES = 600


def _modules():
    return sorted(SOLAR.rglob("*.py"))


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_islpy_only_in_polyhedral():
    importing = [p.relative_to(SOLAR).as_posix() for p in _modules() if "islpy" in _imports(p)]
    assert importing == ["ir/polyhedral.py"]


def test_backends_do_not_read_the_program():
    hits = [
        f"{p.relative_to(SOLAR).as_posix()}:{k}"
        for p in sorted((SOLAR / "backends").rglob("*.py"))
        for k, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\.program\b", line)
    ]
    assert hits == []


def test_no_module_over_600_lines():
    long = {
        p.relative_to(SOLAR).as_posix(): n
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
