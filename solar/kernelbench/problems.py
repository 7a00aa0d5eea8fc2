"""Finding the problems of a KernelBench-layout folder: `ROOT/level1/1_Name.py`, `ROOT/level2/...`.

ROOT may also be a clone of the KernelBench repository, whose problems live in `ROOT/KernelBench/`.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from solar.errors import UsageError

_LEVEL_DIR = re.compile(r"^level(\d+)$")


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem file: its path relative to ROOT (posix, e.g. `level1/1_Square.py`) and level."""

    rel: str
    level: int | None
    path: Path


def level_of(rel: str) -> int | None:
    """The level a relative problem path lies in (`level2/x.py` -> 2), None outside a levelN folder."""
    parts = PurePosixPath(rel).parts
    match = _LEVEL_DIR.match(parts[0]) if len(parts) > 1 else None
    return int(match.group(1)) if match else None


def natural_key(rel: str) -> tuple:
    """Sort key putting `2_x.py` before `10_x.py` within a folder, and level2 before level10."""
    return tuple(
        tuple(
            (0, int(tok), "") if tok.isdigit() else (1, 0, tok) for tok in re.split(r"(\d+)", part)
        )
        for part in PurePosixPath(rel).parts
    )


def problems_root(root: str | Path) -> Path:
    """The folder holding the levelN folders: ROOT itself or ROOT/KernelBench (a repository clone)."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise UsageError(
            f"{root}: is a file, not a folder; pass a KernelBench-layout folder (level1/1_Name.py, ...)"
        )
    if not root.is_dir():
        raise UsageError(
            f"{root}: no such folder; pass a KernelBench-layout folder (level1/1_Name.py, ...)"
        )
    for candidate in (root, root / "KernelBench"):
        if candidate.is_dir() and any(
            _LEVEL_DIR.match(p.name) for p in candidate.iterdir() if p.is_dir()
        ):
            return candidate
    raise UsageError(
        f"{root}: no levelN folders in it; expected a KernelBench layout (level1/1_Name.py, ...)"
    )


def find_problems(
    root: str | Path, levels: tuple[int, ...] = (), pattern: str | None = None
) -> list[Problem]:
    """Problem files under ROOT's levelN folders (only `levels` when given), in natural order.

    `pattern` is a shell glob matched against the relative path (`level1/1_*`) or the file name
    (`*matmul*`)."""
    try:
        found = _find(problems_root(root), levels, pattern)
    except OSError as exc:
        raise UsageError(
            f"{exc.filename or root}: cannot read the suite ({exc.strerror}); check ROOT"
        ) from None
    if not found:
        what = f" at level {' '.join(map(str, levels))}" if levels else ""
        what += f" matching {pattern!r}" if pattern else ""
        raise UsageError(f"{root}: no problem files{what}; check ROOT, --level and --problems")
    return sorted(found, key=lambda p: natural_key(p.rel))


def _find(base: Path, levels: tuple[int, ...], pattern: str | None) -> list[Problem]:
    found: list[Problem] = []
    for folder in base.iterdir():
        match = _LEVEL_DIR.match(folder.name)
        if not folder.is_dir() or not match or (levels and int(match.group(1)) not in levels):
            continue
        for path in folder.glob("*.py"):
            if path.name == "__init__.py" or not path.is_file():
                continue
            rel = f"{folder.name}/{path.name}"
            if pattern and not (
                fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(path.name, pattern)
            ):
                continue
            found.append(Problem(rel, int(match.group(1)), path))
    return found
