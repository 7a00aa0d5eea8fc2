"""Which frontend a model file needs, decided from what its source imports (read with `ast`, without
running the file): a file that imports jax or flax and not torch is a JAX program; a `.ir` file
is IR text."""

from __future__ import annotations

import ast
from pathlib import Path

from solar.errors import ModelFileError
from solar.userfiles import read_python

JAX_ROOTS = {"jax", "flax", "jaxlib", "equinox"}
TORCH_ROOTS = {"torch"}
IR_SUFFIX = ".ir"  # IR text, as `solar ir` prints it


def imported_roots(source: str) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def framework_of(path: str | Path) -> str:
    """'jax' or 'torch' for a model file (torch when it imports both or neither); 'ir' for IR text
    (a `.ir` file). A file that cannot be read or parsed is a one-line ModelFileError."""
    p = Path(path)
    if p.suffix == IR_SUFFIX:
        return "ir"
    if p.suffix != ".py" and p.is_file():
        raise ModelFileError(
            f"{path}: not a Python file; solar analyses .py model files and {IR_SUFFIX} IR text files"
        )
    source = read_python(p, ModelFileError)
    try:
        roots = imported_roots(source)
    except SyntaxError as exc:
        raise ModelFileError(f"{p.name}:{exc.lineno}: syntax error: {exc.msg}; fix the model file") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ModelFileError(f"{p.name}: cannot parse the model file: {type(exc).__name__}: {exc}") from None
    return "jax" if roots & JAX_ROOTS and not roots & TORCH_ROOTS else "torch"
