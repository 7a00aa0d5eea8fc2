"""What a JAX lowering rule sees: `LowerCtx` (builder, output shapes and dtypes, op instance, the
converter state `Lowering` and its sub-jaxpr callback), operand values (`IndexValue`, `as_view`) and
the table of array dtypes the IR knows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import ProgramBuilder
from solar.frontends.views import View
from solar.ir.affine import Affine
from solar.ir.dtypes import DType
from solar.ir.nodes import Cast, Index, Origin

DTYPES: dict[np.dtype, DType] = {
    np.dtype("float64"): DType.F64,
    np.dtype("float32"): DType.F32,
    np.dtype("float16"): DType.F16,
    np.dtype("int64"): DType.I64,
    np.dtype("int32"): DType.I32,
    np.dtype("int16"): DType.I16,
    np.dtype("int8"): DType.I8,
    np.dtype("uint8"): DType.U8,
    np.dtype("bool"): DType.BOOL,
}


def _ml_dtypes() -> None:
    import ml_dtypes

    DTYPES[np.dtype(ml_dtypes.bfloat16)] = DType.BF16
    DTYPES[np.dtype(ml_dtypes.float8_e4m3fn)] = DType.F8E4M3
    DTYPES[np.dtype(ml_dtypes.float8_e5m2)] = DType.F8E5M2


_ml_dtypes()


def dtype_of(dtype: Any) -> DType:
    try:
        return DTYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise SolarError(
            f"arrays of dtype {dtype} are not supported yet; use a float, int or bool dtype"
        ) from None


# ---- values --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexValue:
    """An integer scalar known as an affine function of loop variables: a loop counter inside a
    time loop. It stays an index (no statements) until it is used as data."""

    expr: Affine
    dtype: DType


def as_view(x: Any, shape: Sequence[int] = (), dtype: DType | None = None) -> View:
    """A lowering operand as a view: views pass through, an IndexValue reads its index as data, a
    Python scalar becomes a constant of `shape` and `dtype`."""
    if isinstance(x, View):
        return x
    if isinstance(x, IndexValue):
        v = View((), x.dtype, lambda idx, e=x.expr, d=x.dtype: (((), Cast(d, Index(e))),))
        return views.expand(v, shape) if shape else v
    if dtype is None:
        raise SolarError(f"cannot tell the dtype of the constant {x!r}")
    return views.constant(x, shape, dtype)


# ---- the converter state ------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """A frame of the user's code in the traceback of an equation."""

    file: str
    line: int
    key: tuple[Any, int]  # (code object, bytecode offset): one call site


@dataclass(frozen=True)
class Binding:
    """Where the data of an input/param tensor comes from: the traced jaxpr's flat argument
    `index` ("input" or "param"), or its closed-over constant `index` ("const")."""

    kind: str
    index: int


@dataclass
class Lowering:
    """The state of one conversion: the root builder, what was read at trace time, the bindings
    of input tensors, and the counters for op instances and time variables."""

    b: ProgramBuilder
    source_file: str | None = None
    tf32_default: bool = True
    bindings: dict[str, Binding] = field(default_factory=dict)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)  # time variable -> [lo, hi]
    _instances: int = 0
    _last_key: Any = None
    _time_vars: int = 0

    def instance_for(self, frames: list[Frame]) -> int:
        """A new instance unless the previous top-level equation came from the same call site."""
        key = tuple(f.key for f in frames) or None
        if key is None or key != self._last_key:
            self._instances += 1
        self._last_key = key
        return self._instances - 1

    def fresh_instance(self) -> int:
        self._last_key = None
        self._instances += 1
        return self._instances - 1

    def time_var(self, extent: int) -> str:
        """A fresh name for an in-order loop variable over 0..extent-1 (unique in the program, so
        that `ranges` can describe index values that use it)."""
        self._time_vars += 1
        name = f"t{self._time_vars - 1}"
        self.ranges[name] = (0, extent - 1)
        return name


# (state, builder, jaxpr, consts, args, instance, source) -> the values of the jaxpr's outputs
LowerJaxpr = Callable[..., list[Any]]


@dataclass(frozen=True)
class LowerCtx:
    """What a lowering rule sees: the builder to emit into, the primitive's output shapes and
    dtypes, its op instance (for inlined sub-jaxprs), the converter state and the converter's
    jaxpr walker (`inline` calls it)."""

    state: Lowering
    b: ProgramBuilder
    prim: Any
    out_avals: tuple[tuple[tuple[int, ...], DType], ...]
    instance: int
    source: str
    lower_jaxpr: LowerJaxpr  # the driver's jaxpr walker, for rules that lower sub-jaxprs

    @property
    def shape(self) -> tuple[int, ...]:
        return self.out_avals[0][0]

    @property
    def dtype(self) -> DType:
        return self.out_avals[0][1]

    @property
    def hint(self) -> str:
        return self.prim.name

    def meta(self, k: int) -> tuple[tuple[int, ...], DType]:
        return self.out_avals[k]

    def origin(self) -> None:
        """Set the origin of the statements the rule emits next (after lowering a sub-jaxpr)."""
        self.state.b.origin = Origin(self.prim.name, self.instance, self.source)

    def inline(self, jaxpr: Jaxpr | ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
        """Lower a sub-jaxpr in place, its equations sharing this call's instance."""
        if isinstance(jaxpr, ClosedJaxpr):
            consts = [constant_value(c) for c in jaxpr.consts]
            jaxpr = jaxpr.jaxpr
        else:
            consts = []
        return self.lower_jaxpr(
            self.state, self.b, jaxpr, consts, list(args), self.instance, self.source
        )


def constant_value(c: Any) -> Any:
    """A closed-over constant as a lowering operand: Python scalars stay scalars; arrays must have
    been declared as tensors by the converter (see convert)."""
    arr = np.asarray(c)
    if arr.ndim == 0:
        return arr.item()
    raise SolarError(
        f"a closed-over constant array of shape {arr.shape} inside a sub-computation is not "
        "supported yet; pass it to the function as an input instead"
    )


__all__ = [
    "DTYPES",
    "Binding",
    "Frame",
    "IndexValue",
    "LowerCtx",
    "LowerJaxpr",
    "Lowering",
    "as_view",
    "constant_value",
    "dtype_of",
]
