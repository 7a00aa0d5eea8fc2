"""Importing a user's model file, shared by every frontend: the source is read by
solar.userfiles (one place for missing, binary, mis-encoded files), compiled here (a syntax error is
one line with its line number) and run as a fresh module under solar.frontends.usercode (stdout
dropped, exits and interrupts handled, any failure one line naming the file and the user's line)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from solar.errors import ModelFileError
from solar.frontends.usercode import one_line, running, user_frame
from solar.userfiles import read_python

__all__ = ["compile_model_file", "import_model_file", "one_line", "user_frame"]


def compile_model_file(path: str | Path) -> types.CodeType:
    """The compiled code of a model file; a file that is not Python source is one ModelFileError."""
    p = Path(path)
    if p.suffix != ".py" and p.is_file():
        raise ModelFileError(f"{path}: not a Python file; solar analyses .py model files")
    source = read_python(p, ModelFileError)
    try:
        return compile(source, str(p.resolve()), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise ModelFileError(
            f"{p.name}:{exc.lineno}: syntax error: {exc.msg}; fix the model file"
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # e.g. nesting too deep to compile
        raise ModelFileError(f"{p.name}: cannot compile the model file: {one_line(exc)}") from None


def import_model_file(path: str | Path) -> Any:
    """Import a model file as a fresh module; any failure is a ModelFileError naming file and line."""
    p = Path(path)
    code = compile_model_file(p)
    name = f"solar_model_{abs(hash(str(p.resolve())))}"
    module = types.ModuleType(name)
    module.__file__ = str(p.resolve())
    sys.modules[name] = module  # dataclasses, pickling and typing look the module up by name
    folder = str(p.resolve().parent)
    added = folder not in sys.path
    if added:  # helper modules beside the model file import as with `python model.py`
        sys.path.append(folder)
    try:
        with running(p, "importing the model file"):
            exec(code, module.__dict__)  # noqa: S102 - running the user's model file is the point
    finally:
        sys.modules.pop(name, None)
        if added and folder in sys.path:
            sys.path.remove(folder)
    return module
