"""Which frontend a model file needs, decided from what its source imports (read with `ast`, without
running the file): a file that imports jax or flax and not torch is a JAX program; a `.ir` file
is IR text. With the `--frontend` choice, which loader a model file goes to (`file_frontend`): the
one decision solar.frontends.select acts on and the CLI checks before it imports a framework."""

from __future__ import annotations

import ast
from pathlib import Path

from solar.errors import ModelFileError, UsageError
from solar.userfiles import read_python

JAX_ROOTS = {"jax", "flax", "jaxlib", "equinox"}
TORCH_ROOTS = {"torch"}
IR_SUFFIX = ".ir"  # IR text, as `solar ir` prints it
FRONTENDS = ("auto", "torch", "jax", "llm")
LOSSES = ("sum", "mean")  # the losses of a training step (`--loss`) every frontend knows by name


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


def check_frontend_choice(frontend: str, has_llm: bool) -> None:
    """`frontend` is one of FRONTENDS, and "llm" comes with an endpoint."""
    if frontend not in FRONTENDS:
        raise UsageError(f"unknown frontend {frontend!r}; use one of {', '.join(FRONTENDS)}")
    if frontend == "llm" and not has_llm:
        raise UsageError(
            "--frontend llm needs an endpoint: --llm-base-url and --llm-model (or SOLAR_LLM_BASE_URL, "
            "SOLAR_LLM_MODEL)"
        )


def file_frontend(path: str | Path, frontend: str, mode: str | None, infer_structure: bool) -> str:
    """The loader a model file goes to under `frontend` (checked by check_frontend_choice): "ir"
    (IR text), "torch" (the PyTorch tracer, with the LLM frontend for what it cannot read, or the
    LLM frontend alone) or "jax"; a flag that does not apply to the file is a UsageError."""
    framework = framework_of(path)
    if framework == "ir":
        if mode is not None or infer_structure:
            raise UsageError("--mode and --infer-structure apply to PyTorch model files, not to IR text")
        return "ir"
    if frontend in ("llm", "auto", "torch") and framework != "jax" or frontend == "llm":
        return "torch"
    if frontend == "torch":
        raise UsageError(f"{path} is a JAX program (it imports jax, not torch); use --frontend jax or auto")
    if framework == "jax":
        if mode is not None or infer_structure:
            raise UsageError("--mode and --infer-structure apply to PyTorch model files, not to JAX files")
        return "jax"
    raise UsageError(f"{path} is a PyTorch program; use --frontend torch or auto")


def loss_spec(spec: str, file_required: bool = False) -> tuple[str, str] | None:
    """A `--loss` value: None for a loss named in LOSSES, else the (FILE, function) of
    `FILE:function` (FILE empty: a function of the model file itself, unless `file_required`)."""
    if spec in LOSSES:
        return None
    path, sep, name = spec.rpartition(":")
    if not sep or not name or file_required and not path:
        raise UsageError(f"unknown loss {spec!r}; use sum, mean or FILE:function")
    return path, name
