"""Importing a user's model file, shared by every frontend: a fresh module per import, and any
failure turned into a one-line ModelFileError naming the file and the user's line."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import traceback
from pathlib import Path
from typing import Any

from solar.errors import ModelFileError


def one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0] if text else type(exc).__name__


def user_frame(exc: BaseException, path: str | None) -> str:
    """`file.py:LINE` of the innermost frame of the exception in the user's file."""
    if path is None:
        return "the program"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == path:
            return f"{Path(path).name}:{frame.lineno}"
    return Path(path).name


def import_model_file(path: str | Path) -> Any:
    """Import a model file as a fresh module; any failure is a ModelFileError naming file and line."""
    p = Path(path)
    if not p.is_file():
        raise ModelFileError(f"{path}: no such file; pass the path of a Python model file")
    if p.suffix != ".py":
        raise ModelFileError(f"{path}: not a Python file; solar analyses .py model files")
    name = f"solar_model_{abs(hash(str(p.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, p)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ModelFileError(f"{p.name}:{exc.lineno}: syntax error: {exc.msg}; fix the model file") from None
    except Exception as exc:  # the user's module failed at import time
        raise ModelFileError(
            f"{user_frame(exc, str(p.resolve()))}: importing the model file failed: {one_line(exc)}"
        ) from None
    finally:
        sys.modules.pop(name, None)
    return module
