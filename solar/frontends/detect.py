"""Which frontend a model file needs, decided from what its source imports (read with `ast`, without
running the file): a file that imports jax or flax and not torch is a JAX program."""

from __future__ import annotations

import ast
from pathlib import Path

from solar.errors import ModelFileError

JAX_ROOTS = {"jax", "flax", "jaxlib", "equinox"}
TORCH_ROOTS = {"torch"}


def imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def framework_of(path: str | Path) -> str:
    """'jax' or 'torch' for a model file (torch when it imports both or neither)."""
    p = Path(path)
    try:
        source = p.read_text()
    except OSError:
        return "torch"  # the torch loader reports the missing file in its own words
    try:
        roots = imported_roots(source)
    except SyntaxError as exc:
        raise ModelFileError(f"{p.name}:{exc.lineno}: syntax error: {exc.msg}; fix the model file") from None
    return "jax" if roots & JAX_ROOTS and not roots & TORCH_ROOTS else "torch"
