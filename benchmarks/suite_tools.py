"""Load KernelBench-format problem files, optionally with their sizes shrunk.

A problem file (KernelBench format) defines ``Model``, ``get_inputs()`` and ``get_init_inputs()`` and
keeps its sizes in module-level UPPERCASE constants. ``load_problem(path, shrink=k)`` executes the file
with every *literal* UPPERCASE int constant larger than ``SHRINK_FLOOR`` replaced by
``max(SHRINK_FLOOR, value // k)``; everything else in the file runs unchanged. The rules a file must
follow so that every shrunk size stays valid:

* sizes are plain int literals at module level: ``BATCH = 16``, ``DIM = 4096``;
* a size that must be a multiple of (or otherwise tied to) another is written as an expression of
  named constants, never as a second literal: ``DIM = HEADS * HEAD_DIM``. Only whole-literal
  assignments are shrunk, so the ``64`` in ``CHANNELS = GROUPS * 64`` would stay 64 (write
  ``CHANNELS_PER_GROUP = 64`` and multiply);
* structural ints (kernel sizes, strides, paddings, dilations, head or group counts, reduction dims,
  small channel counts) are at most ``SHRINK_FLOOR`` and are therefore never changed;
* a model works at every spatial/feature size >= ``SHRINK_FLOOR`` (e.g. a flatten -> linear computes
  its in_features from the sizes it is given rather than hard-coding them).

The source is rewritten on its AST, so line numbers (tracebacks, inspect) still point into the file.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import sys
import types
from pathlib import Path

__all__ = ["SHRINK_FLOOR", "list_problems", "load_problem", "shrink_value", "size_constants"]

#: ints at or below this value are structural and never shrunk; shrunk sizes never go below it.
SHRINK_FLOOR = 16

_CONST_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def shrink_value(value: int, shrink: int) -> int:
    """The value an UPPERCASE int constant takes under ``shrink``."""
    if shrink == 1 or value <= SHRINK_FLOOR:
        return value
    return max(SHRINK_FLOOR, value // shrink)


def _natural_key(path: Path) -> tuple:
    return tuple(
        tuple(int(tok) if tok.isdigit() else tok for tok in re.split(r"(\d+)", part))
        for part in path.parts
    )


def list_problems(root: str | Path) -> list[Path]:
    """All ``*.py`` problem files under ``root`` (recursively), in natural order (2_ before 10_)."""
    root = Path(root)
    files = [
        p for p in root.rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    ]
    return sorted(files, key=lambda p: _natural_key(p.relative_to(root)))


def _constant_assignments(tree: ast.Module):
    """Yield the ``ast.Constant`` nodes of top-level ``NAME = <int literal>`` assignments."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        if (
            len(targets) == 1
            and isinstance(targets[0], ast.Name)
            and _CONST_NAME.match(targets[0].id)
            and isinstance(value, ast.Constant)
            and type(value.value) is int  # not bool
        ):
            yield targets[0].id, value


def size_constants(path: str | Path, shrink: int = 1) -> dict[str, tuple[int, int]]:
    """``{NAME: (original, shrunk)}`` for every literal UPPERCASE int constant of the file."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    return {
        name: (node.value, shrink_value(node.value, shrink))
        for name, node in _constant_assignments(tree)
    }


def load_problem(path: str | Path, shrink: int = 1) -> types.ModuleType:
    """Execute a problem file as a fresh module, with its size constants shrunk by ``shrink``.

    ``shrink=1`` loads the file exactly as written. The module is registered in ``sys.modules`` under
    a name unique to (path, shrink) so that tools which look classes up by module work.
    """
    if not isinstance(shrink, int) or isinstance(shrink, bool) or shrink < 1:
        raise ValueError(f"shrink must be an int >= 1, got {shrink!r}")
    path = Path(path).resolve()
    source = path.read_text()
    tree = ast.parse(source, filename=str(path))
    if shrink != 1:
        for _name, node in _constant_assignments(tree):
            node.value = shrink_value(node.value, shrink)
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    stem = re.sub(r"\W", "_", path.stem)
    mod_name = f"_solar_problem_{stem}_{digest}_s{shrink}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    code = compile(tree, str(path), "exec")
    sys.modules[mod_name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return module
