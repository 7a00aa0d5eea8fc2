"""Element types of IR tensors: storage width in bits, kind, and the numpy type the interpreter uses."""

from __future__ import annotations

from enum import Enum

import numpy as np


class DType(Enum):
    # value: (text name, bits, kind, numpy type used by the interpreter)
    F64 = ("f64", 64, "float", np.float64)
    F32 = ("f32", 32, "float", np.float32)
    F16 = ("f16", 16, "float", np.float16)
    BF16 = ("bf16", 16, "float", np.float32)  # emulated: numpy has no bfloat16
    F8E4M3 = ("f8e4m3", 8, "float", np.float32)
    F8E5M2 = ("f8e5m2", 8, "float", np.float32)
    FP4 = ("fp4", 4, "float", np.float32)
    I64 = ("i64", 64, "int", np.int64)
    I32 = ("i32", 32, "int", np.int32)
    I16 = ("i16", 16, "int", np.int16)
    I8 = ("i8", 8, "int", np.int8)
    U8 = ("u8", 8, "int", np.uint8)
    I4 = ("i4", 4, "int", np.int8)
    BOOL = ("bool", 8, "bool", np.bool_)

    @property
    def text(self) -> str:
        return self.value[0]

    @property
    def bits(self) -> int:
        return self.value[1]

    @property
    def bytes(self) -> float:
        """Storage bytes per element (0.5 for 4-bit types)."""
        return self.value[1] / 8

    @property
    def kind(self) -> str:
        return self.value[2]

    @property
    def numpy(self) -> type:
        return self.value[3]

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @staticmethod
    def parse(text: str) -> DType:
        try:
            return _BY_TEXT[text]
        except KeyError:
            known = ", ".join(_BY_TEXT)
            from solar.errors import IRSyntaxError

            raise IRSyntaxError(f"unknown dtype {text!r}; known: {known}") from None


_BY_TEXT = {d.text: d for d in DType}
