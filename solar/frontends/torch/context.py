"""What a lowering rule sees (`LowerCtx`: the program builder and the fx node being lowered) and
the table of torch dtypes the IR knows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import torch

from solar.errors import SolarError
from solar.frontends.builder import ProgramBuilder
from solar.ir.dtypes import DType

DTYPES: dict[torch.dtype, DType] = {
    torch.float64: DType.F64,
    torch.float32: DType.F32,
    torch.float16: DType.F16,
    torch.bfloat16: DType.BF16,
    torch.float8_e4m3fn: DType.F8E4M3,
    torch.float8_e5m2: DType.F8E5M2,
    torch.int64: DType.I64,
    torch.int32: DType.I32,
    torch.int16: DType.I16,
    torch.int8: DType.I8,
    torch.uint8: DType.U8,
    torch.bool: DType.BOOL,
}


def dtype_of(t: torch.dtype) -> DType:
    try:
        return DTYPES[t]
    except KeyError:
        raise SolarError(f"tensors of dtype {t} are not supported yet") from None


@dataclass
class LowerCtx:
    """What a lowering rule sees: the builder, and the node being lowered and its output metadata."""

    b: ProgramBuilder
    node: torch.fx.Node
    sizes: Mapping[str, int] = field(default_factory=dict)  # data-dependent symbol name -> value taken

    @property
    def val(self) -> Any:
        return self.node.meta.get("val")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(concrete(s, self.sizes) for s in self.val.shape)

    @property
    def dtype(self) -> DType:
        return dtype_of(self.val.dtype)

    @property
    def hint(self) -> str:
        return self.node.name

    def meta(self, k: int) -> tuple[tuple[int, ...], DType]:
        """Shape and dtype of output k of a multi-output op."""
        v = self.val[k]
        return tuple(concrete(s, self.sizes) for s in v.shape), dtype_of(v.dtype)


def concrete(value: Any, sizes: Mapping[str, int]) -> Any:
    """A size, or a size expression or condition of torch's symbols, with each data-dependent
    symbol replaced by the value `sizes` gives it (solar.frontends.torch.datasizes)."""
    if isinstance(value, (torch.SymInt, torch.SymBool, torch.SymFloat)):
        expr = value.node.expr
        expr = expr.xreplace({s: sizes[s.name] for s in expr.free_symbols if s.name in sizes})
        kind = {torch.SymInt: int, torch.SymBool: bool, torch.SymFloat: float}[type(value)]
        return kind(expr)
    return value if value is None or isinstance(value, (bool, float)) else int(value)
