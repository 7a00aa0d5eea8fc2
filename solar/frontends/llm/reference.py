"""The original program, run for real on the CPU at a shape binding, to check an IR against: a
KernelBench-format PyTorch file (whatever its forward does: data-dependent branches, NumPy, other
libraries) or one ATen op. A *case* is one binding: the data fed to both sides and the original's
outputs. Bindings vary the file's integer module constants (sizes, >= MIN_VARIED), or shrink an op's
argument shapes; the real shapes are a binding too when they are small enough to run."""

from __future__ import annotations

import math
import re
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from solar.errors import ModelFileError
from solar.frontends import usercode
from solar.frontends.files import import_model_file

MIN_VARIED = 8  # module integers at least this large are sizes, varied between bindings
REAL_LIMIT = 1 << 21  # elements of inputs + parameters up to which the real shapes are run
# Binding variants: the distinct varied constants, in increasing order, take base, base+step, ...
VARIANTS = ((5, 1), (8, 8), (6, 2), (4, 4))
SMALL_SCALE = 0.05  # inputs scaled down in one case, so that value-dependent branches flip
TOLERANCE = {"float64": 1e-9, "float32": 2e-4, "float16": 2e-2, "bfloat16": 5e-2}
_IDENT = re.compile(r"[^A-Za-z0-9_]")


def ir_name(key: str) -> str:
    """The IR name of a parameter or buffer (dots and other non-identifier characters become _),
    as the tracer names them."""
    base = _IDENT.sub("_", key).strip("_") or "t"
    return "t" + base if base[0].isdigit() else base


@dataclass(frozen=True)
class TensorInfo:
    shape: tuple[int, ...]
    dtype: str  # torch dtype name without the prefix: float32, int64, ...

    def describe(self) -> str:
        return f"{self.dtype}{list(self.shape)}"


@dataclass(frozen=True)
class Case:
    """One shape binding: what both sides are fed, and what the original returned."""

    label: str  # e.g. "batch=5, features=6" or "x: float32[4, 4]"
    inputs: tuple[np.ndarray, ...]
    params: dict[str, np.ndarray]
    outputs: tuple[np.ndarray, ...]
    tolerance: float
    real: bool = False  # the program's own shapes


def _numpy(x: Any) -> np.ndarray:
    import torch

    if isinstance(x, torch.Tensor):
        t = x.detach()
        if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
            t = t.float()
        return t.cpu().numpy()
    return np.asarray(x)


def tensors_in(x: Any) -> list[Any]:
    import torch

    if isinstance(x, (torch.Tensor, np.ndarray)):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for item in x for t in tensors_in(item)]
    if isinstance(x, dict):
        return [t for item in x.values() for t in tensors_in(item)]
    return []


def _dtype_name(x: Any) -> str:
    return str(getattr(x, "dtype", "float32")).removeprefix("torch.")


def tolerance(outputs: list[Any]) -> float:
    return max((TOLERANCE.get(_dtype_name(o), 0.0) for o in outputs), default=0.0)


# ---- a model file --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFile:
    path: Path

    @property
    def source(self) -> str:
        return self.path.read_text()

    def module(self, overrides: dict[str, int] | None = None) -> types.ModuleType:
        module = import_model_file(self.path)
        for name, value in (overrides or {}).items():
            setattr(module, name, value)
        return module

    def sizes(self) -> dict[str, int]:
        """The module's integer constants that are sizes (varied between bindings)."""
        module = self.module()
        return {
            k: v
            for k, v in vars(module).items()
            if type(v) is int and v >= MIN_VARIED and not k.startswith("_")
        }

    def shapes(self) -> tuple[list[TensorInfo], dict[str, TensorInfo]]:
        """Shapes and dtypes of the inputs and parameters at the program's own sizes, built under
        a fake-tensor mode (nothing is allocated)."""
        import torch
        from torch._subclasses.fake_tensor import FakeTensorMode

        from solar.frontends.torch import loader

        module = self.module()
        with FakeTensorMode(allow_non_fake_inputs=True), loader.on_cpu():
            model = _build(module, self.path)
            inputs = _call(module.get_inputs, self.path, "get_inputs()")
        info = lambda t: TensorInfo(tuple(int(s) for s in t.shape), _dtype_name(t))
        params = {}
        if isinstance(model, torch.nn.Module):
            params = {ir_name(k): info(v) for k, v in model.state_dict().items()}
        return [info(t) for t in tensors_in(list(inputs))], params

    def run(
        self, overrides: dict[str, int], label: str, real: bool, seed: int = 0, scale: float = 1.0
    ) -> Case:
        """Build the model and its inputs for real at `overrides` and run it on the CPU
        (floating-point inputs multiplied by `scale`)."""
        import torch

        from solar.frontends.torch import loader

        module = self.module(overrides)
        torch.manual_seed(seed)
        np.random.seed(seed)
        with loader.on_cpu(), torch.no_grad():
            model = _build(module, self.path)
            inputs = list(_call(module.get_inputs, self.path, "get_inputs()"))
            if scale != 1.0:
                inputs = [
                    x * scale if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                    for x in inputs
                ]
            outputs = tensors_in(_call(lambda: model(*inputs), self.path, "running the model"))
        params = {}
        if isinstance(model, torch.nn.Module):
            params = {ir_name(k): _numpy(v) for k, v in model.state_dict().items()}
        return Case(
            label,
            tuple(_numpy(t) for t in tensors_in(inputs)),
            params,
            tuple(_numpy(o) for o in outputs),
            tolerance(outputs),
            real,
        )

    def cases(self, seed: int = 0) -> Iterator[Case]:
        """The real shapes (when small enough), then the shrunk variants, lazily: a variant the
        program cannot run at (a size that must divide another) is skipped."""
        inputs, params = self.shapes()
        numel = sum(math.prod(t.shape) for t in [*inputs, *params.values()])
        sizes = self.sizes()
        if numel <= REAL_LIMIT:
            yield self.run({}, _label(sizes) + " (the program's own sizes)", True, seed)
        first = True
        for overrides in variants(sizes):
            # the first variant also with small inputs: a branch on values (x.max() > 1) goes
            # the other way there
            for scale in (1.0, SMALL_SCALE) if first else (1.0,):
                label = _label(overrides) + (f", inputs x {scale:g}" if scale != 1.0 else "")
                try:
                    yield self.run(overrides, label, False, seed, scale)
                    first = False
                except ModelFileError:
                    break


class JaxFile(ModelFile):
    """A JAX model file with a function `forward(*inputs)` (or `forward(params, *inputs)` with
    `get_params()`), run with jax on the CPU; ShapeDtypeStruct inputs and parameters get random
    values."""

    def _arrays(self, module: types.ModuleType, seed: int) -> tuple[list, Any]:
        import jax

        rng = np.random.default_rng(seed)

        def real(x: Any) -> Any:
            if isinstance(x, jax.ShapeDtypeStruct) or not hasattr(x, "__array__"):
                if not hasattr(x, "shape"):
                    return x
                dtype = np.dtype(x.dtype)
                if dtype.kind == "f":
                    return rng.standard_normal(x.shape).astype(dtype)
                return rng.integers(0, 3, x.shape).astype(dtype)
            return np.asarray(x)

        if not hasattr(module, "forward"):
            raise ModelFileError(f"{self.path.name}: the LLM frontend reads JAX files with a function forward(*inputs)")
        inputs = jax.tree_util.tree_map(real, list(_call(module.get_inputs, self.path, "get_inputs()")))
        params = None
        if hasattr(module, "get_params"):
            params = jax.tree_util.tree_map(real, _call(module.get_params, self.path, "get_params()"))
        return inputs, params

    def _param_infos(self, params: Any) -> dict[str, Any]:
        import jax

        from solar.frontends.jax.loader import param_names

        if params is None:
            return {}
        leaves = jax.tree_util.tree_leaves(params)
        return {ir_name(a.name): leaf for a, leaf in zip(param_names(params, False), leaves)}

    def shapes(self) -> tuple[list[TensorInfo], dict[str, TensorInfo]]:
        import jax

        module = self.module()
        inputs, params = self._arrays(module, 0)
        info = lambda t: TensorInfo(tuple(int(s) for s in t.shape), str(np.dtype(t.dtype)))  # noqa: E731
        leaves = [x for x in jax.tree_util.tree_leaves(inputs) if hasattr(x, "shape")]
        return [info(t) for t in leaves], {k: info(v) for k, v in self._param_infos(params).items()}

    def run(self, overrides: dict[str, int], label: str, real: bool, seed: int = 0, scale: float = 1.0) -> Case:
        import jax

        module = self.module(overrides)
        inputs, params = self._arrays(module, seed)
        if scale != 1.0:
            inputs = [x * scale if getattr(x, "dtype", None) is not None and np.dtype(x.dtype).kind == "f" else x for x in inputs]
        args = inputs if params is None else [params, *inputs]
        with jax.default_device(jax.devices("cpu")[0]):
            out = _call(lambda: module.forward(*args), self.path, "running forward")
        outputs = [np.asarray(o) for o in jax.tree_util.tree_leaves(out)]
        leaves = [np.asarray(x) for x in jax.tree_util.tree_leaves(inputs) if hasattr(x, "shape")]
        params_np = {k: np.asarray(v) for k, v in self._param_infos(params).items()}
        return Case(label, tuple(leaves), params_np, tuple(outputs), tolerance(outputs), real)


def variants(sizes: dict[str, int]) -> Iterator[dict[str, int]]:
    distinct = sorted(set(sizes.values()))
    for base, step in VARIANTS:
        value = {v: base + step * k for k, v in enumerate(distinct)}
        yield {name: value[v] for name, v in sizes.items()}


def _label(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items()) or "no size constants"


def _call(fn, path: Path, what: str) -> Any:
    """fn() as user code: its output dropped, whatever it raises one ModelFileError line."""
    return usercode.call(fn, what, path)


def _build(module: Any, path: Path) -> Any:
    """module.Model(*get_init_inputs()) as user code."""
    return _call(lambda: module.Model(*getattr(module, "get_init_inputs", list)()), path, "building Model")


# ---- one op --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpCall:
    """One ATen op with the metadata of its traced arguments (fake tensors) and keyword args."""

    target: Any  # an OpOverload
    args: tuple
    kwargs: dict
    out: Any  # the traced output metadata

    def inputs(self) -> list[TensorInfo]:
        return [
            TensorInfo(tuple(int(s) for s in t.shape), _dtype_name(t))
            for t in tensors_in(list(self.args))
        ]

    def outputs(self) -> list[TensorInfo]:
        return [
            TensorInfo(tuple(int(s) for s in t.shape), _dtype_name(t)) for t in tensors_in(self.out)
        ]

    def attributes(self) -> str:
        """The non-tensor arguments, as the call passes them."""
        import torch

        schema = self.target._schema.arguments
        parts = []
        for arg, value in zip(schema, self.args):
            if not isinstance(value, torch.Tensor) and not tensors_in(value):
                parts.append(f"{arg.name}={value!r}")
        parts += [f"{k}={v!r}" for k, v in self.kwargs.items() if not tensors_in(v)]
        return ", ".join(parts) or "none"

    def signature(self) -> str:
        """What the op's IR depends on: the op, its inputs' ranks and dtypes, its attributes."""
        ranks = ", ".join(f"{t.dtype}[rank {len(t.shape)}]" for t in self.inputs())
        return f"{self.target} ({ranks}) attributes: {self.attributes()}"

    def cases(self, seed: int = 0) -> Iterator[Case]:
        """The traced shapes when small, then the arguments shrunk to several small sizes (every
        size above the cap becomes the cap, in shapes and integer arguments alike)."""
        import torch

        from solar.frontends.torch.check import realise, shrink_by_value

        numel = sum(math.prod(t.shape) for t in self.inputs())
        caps = ((None,) if numel <= 1 << 14 else ()) + (6, 4, 3)
        seen: set[str] = set()
        for cap in caps:
            shrunk = self.args if cap is None else shrink_by_value(self.args, cap)
            real = realise(shrunk, torch.Generator().manual_seed(seed))
            label = ", ".join(_describe(t) for t in tensors_in(list(real)))
            if label in seen:
                continue
            seen.add(label)
            try:
                with torch.no_grad():
                    out = self.target(*real, **self.kwargs)
            except Exception:  # shapes this op does not accept
                continue
            outs = tensors_in(out)
            yield Case(
                label,
                tuple(_numpy(t) for t in tensors_in(list(real))),
                {},
                tuple(_numpy(o) for o in outs),
                tolerance(outs),
                cap is None,
            )


def _describe(t: Any) -> str:
    return f"{_dtype_name(t)}{list(t.shape)}"
