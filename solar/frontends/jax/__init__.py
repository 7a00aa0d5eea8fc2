"""JAX and Flax frontend: jax.make_jaxpr on abstract inputs -> the lowering table -> IR.

JAX model files. A JAX model file is a Python file that imports jax (or flax) and defines:

- `get_inputs()` -> a list of the program's inputs: arrays or, better, `jax.ShapeDtypeStruct`s
  (nothing is allocated then; arrays are replaced by their shape and dtype before tracing, and
  any pytree of them is accepted as one input);
- and the program, as ONE of
  - `forward(*inputs)`: a plain (optionally jax.jit-decorated) function; arrays it closes over
    become parameters. Optionally `get_params()` returns a pytree of parameters (arrays or
    ShapeDtypeStructs) and the function is called `forward(params, *inputs)`;
  - `class Model`: a Flax module, built as `Model(*get_init_inputs())` (`get_init_inputs()` is
    optional; its default is no arguments) and called as `model(*inputs)`. A `flax.linen` module's
    parameters come from `jax.eval_shape(model.init, ...)`; a `flax.nnx` module is built inside
    `nnx.eval_shape`, with `rngs=nnx.Rngs(0)` added when its constructor takes `rngs`. Either way
    only shapes exist: no parameter is allocated.

Sizes are best written as UPPERCASE module-level int constants (sizes tied to others as
expressions, `D_MODEL = HEADS * HEAD_DIM`, so that shrinking keeps them consistent). Parameters
become IR tensors with role param, inputs role input. Only shapes and dtypes are used, so the model
may be far larger than memory; the program is traced once, in inference form (write BatchNorm with
use_running_average=True and Dropout deterministic). Which fp32 contractions may use TF32 is read from
`jax.config.jax_default_matmul_precision` at trace time and from each dot/conv's `precision`.

Python API: `lower_file(path)` and `lower_callable(fn_or_module, inputs, name=None)` return
`(Program, JaxTraced)`; `check_file(path)` / `check_callable(fn_or_module, inputs)` compare the IR's
outputs with JAX's on random data; `is_jax_object(obj)` tells a JAX callable or Flax module from a
torch module, `is_jax_file(path)` a JAX file (imports jax/flax, not torch) from a PyTorch one;
`supported_primitives()` lists the lowering table. Loops (`lax.scan`, `fori_loop`, static
`while_loop`) and cumulative ops become in-order loops, which `solar.ir.interp.run` runs step by
step."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solar.frontends.detect import imported_roots
from solar.ir.nodes import Program

if TYPE_CHECKING:
    from solar.frontends.compare import CheckResult
    from solar.frontends.jax.loader import JaxTraced


def lower_file(path: str | Path) -> tuple[Program, JaxTraced]:
    from solar.frontends.jax import convert, loader

    traced = loader.trace_file(path)
    return convert.convert(traced)[0], traced


def lower_callable(
    fn_or_module: Any, inputs: Sequence[Any], name: str | None = None
) -> tuple[Program, JaxTraced]:
    from solar.frontends.jax import convert, loader

    traced = loader.trace_callable(fn_or_module, inputs, name)
    return convert.convert(traced)[0], traced


def check_file(path: str | Path, seed: int = 0) -> CheckResult:
    from solar.frontends.jax.check import check_file as check

    return check(path, seed)


def check_callable(fn_or_module: Any, inputs: Sequence[Any], seed: int = 0) -> CheckResult:
    from solar.frontends.jax.check import check_callable as check

    return check(fn_or_module, inputs, seed)


def is_jax_file(path: str | Path) -> bool:
    """True when the file imports jax or flax and does not import torch (read, never executed)."""
    try:
        roots = imported_roots(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return False
    return bool(roots & {"jax", "flax"}) and "torch" not in roots


def supported_primitives() -> tuple[str, ...]:
    """Names of the JAX primitives with a lowering (for `solar ops`)."""
    from solar.frontends.jax.lowerings import LOWERINGS

    return tuple(sorted(p.name for p in LOWERINGS))


def is_jax_object(obj: Any) -> bool:
    """A Flax module instance, or a plain Python callable that is not a torch.nn.Module (nor a
    class, a path or a solar Program). Imports neither jax nor torch."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.nn.Module):
        return False
    if "flax" in sys.modules:
        from flax import linen, nnx

        if isinstance(obj, (linen.Module, nnx.Module)):
            return True
    if isinstance(obj, (type, str, Path, Program)):
        return False
    return callable(obj)


__all__ = [
    "JaxTraced",
    "check_callable",
    "check_file",
    "is_jax_file",
    "is_jax_object",
    "lower_callable",
    "lower_file",
    "supported_primitives",
]


def __getattr__(name: str) -> Any:
    if name == "JaxTraced":
        from solar.frontends.jax.loader import JaxTraced

        return JaxTraced
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
