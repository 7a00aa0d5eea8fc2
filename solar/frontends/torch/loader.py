"""Loading PyTorch programs without allocating them: a KernelBench-format file (Model, get_inputs,
get_init_inputs) or an in-memory module, traced with torch.export under a fake-tensor mode and
decomposed to core ATen."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from solar.errors import ModelFileError, SolarError

REQUIRED = ("Model", "get_inputs")


@dataclass(frozen=True)
class Traced:
    """A core-ATen ExportedProgram plus what the analysis must know about how it was traced."""

    exported: torch.export.ExportedProgram
    name: str
    source_file: str | None
    flags: tuple[tuple[str, bool], ...]


def framework_flags() -> tuple[tuple[str, bool], ...]:
    """PyTorch's TF32 switches as they are now (they decide which ops may use TF32 tensor cores)."""
    return (
        ("torch.backends.cuda.matmul.allow_tf32", bool(torch.backends.cuda.matmul.allow_tf32)),
        ("torch.backends.cudnn.allow_tf32", bool(torch.backends.cudnn.allow_tf32)),
    )


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0] if text else type(exc).__name__


def _user_frame(exc: BaseException, path: str) -> str:
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
        raise ModelFileError(
            f"{p.name}:{exc.lineno}: syntax error: {exc.msg}; fix the model file"
        ) from None
    except Exception as exc:  # the user's module failed at import time
        raise ModelFileError(
            f"{_user_frame(exc, str(p))}: importing the model file failed: {_one_line(exc)}"
        ) from None
    finally:
        sys.modules.pop(name, None)
    return module


def _call_user(fn: Any, what: str, path: str, *args: Any) -> Any:
    try:
        return fn(*args)
    except SolarError:
        raise
    except Exception as exc:
        raise ModelFileError(f"{_user_frame(exc, path)}: {what} failed: {_one_line(exc)}") from None


def _as_tuple(x: Any) -> tuple:
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def trace_file(path: str | Path) -> Traced:
    """Trace a KernelBench-format file: build Model(*get_init_inputs()) and its inputs under a
    fake-tensor mode, so neither parameters nor inputs are ever allocated."""
    module = import_model_file(path)
    missing = [n for n in REQUIRED if not hasattr(module, n)]
    if missing:
        raise ModelFileError(
            f"{Path(path).name}: defines no {', '.join(missing)}; a PyTorch model file defines "
            "class Model(nn.Module), get_inputs() and optionally get_init_inputs()"
        )
    spath = str(Path(path).resolve())
    init_fn = getattr(module, "get_init_inputs", lambda: [])
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        init_args = _as_tuple(_call_user(init_fn, "get_init_inputs()", spath))
        model = _call_user(module.Model, "building Model(*get_init_inputs())", spath, *init_args)
        if not isinstance(model, torch.nn.Module):
            raise ModelFileError(f"{Path(path).name}: Model(...) is not a torch.nn.Module")
        inputs = _as_tuple(_call_user(module.get_inputs, "get_inputs()", spath))
        model = _fakeify_module(model, mode)
        inputs = tuple(_fakeify(x, mode) for x in inputs)
        exported = _export(model, inputs, spath)
    return Traced(exported, Path(path).stem, spath, framework_flags())


def trace_module(model: torch.nn.Module, inputs: Sequence[Any], name: str | None = None) -> Traced:
    """Trace an in-memory module with example inputs; real tensors are replaced by fake ones of the
    same shape and dtype before tracing, so tracing allocates nothing more."""
    if not isinstance(model, torch.nn.Module):
        raise ModelFileError(f"expected a torch.nn.Module, got {type(model).__name__}")
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake_inputs = tuple(_fakeify(x, mode) for x in _as_tuple(inputs))
        model = _fakeify_module(model, mode)
        exported = _export(model, fake_inputs, None)
    return Traced(exported, name or type(model).__name__, None, framework_flags())


def _fakeify(x: Any, mode: FakeTensorMode) -> Any:
    if isinstance(x, torch.Tensor) and not isinstance(x, torch._subclasses.fake_tensor.FakeTensor):
        return mode.from_tensor(x)
    return x


def _fakeify_module(model: torch.nn.Module, mode: FakeTensorMode) -> torch.nn.Module:
    """Swap any real parameter or buffer (made outside the fake mode) for a fake one of the same
    shape, without copying data, so the trace never touches real memory."""
    import copy

    reals = [
        t
        for t in list(model.parameters(recurse=True)) + list(model.buffers(recurse=True))
        if not isinstance(t, torch._subclasses.fake_tensor.FakeTensor)
    ]
    if not reals:
        return model
    memo = {id(t): _fake_like(t, mode) for t in reals}
    return copy.deepcopy(model, memo)


def _fake_like(t: torch.Tensor, mode: FakeTensorMode) -> torch.Tensor:
    fake = mode.from_tensor(t)
    return torch.nn.Parameter(fake, requires_grad=t.requires_grad) if isinstance(t, torch.nn.Parameter) else fake


def _export(model: torch.nn.Module, inputs: tuple, path: str | None) -> torch.export.ExportedProgram:
    where = Path(path).name if path else type(model).__name__
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's own deprecation chatter, not the user's problem
            ep = torch.export.export(model, inputs, strict=False)
            return ep.run_decompositions()
    except SolarError:
        raise
    except Exception as exc:
        line = _user_frame(exc, path) if path else where
        raise ModelFileError(f"{line}: torch.export could not trace the model: {_one_line(exc)}") from None
