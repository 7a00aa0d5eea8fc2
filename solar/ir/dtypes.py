"""Element types of IR tensors: storage width in bits, kind, and the numpy type the interpreter uses;
block-scaled formats (OCP MX, NVFP4) with the scale bytes they store beside their elements."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np

from solar.errors import IRSyntaxError


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
    # Block-scaled formats: `bits` is the element width; each block of consecutive elements also
    # stores one scale (see BLOCK_SCALES). Interpreted as float32 values, like fp8 and fp4.
    MXF8E4M3 = ("mxf8e4m3", 8, "float", np.float32)
    MXF8E5M2 = ("mxf8e5m2", 8, "float", np.float32)
    MXFP4 = ("mxfp4", 4, "float", np.float32)
    NVFP4 = ("nvfp4", 4, "float", np.float32)

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

    @property
    def block_scale(self) -> BlockScale | None:
        """The per-block scale a block-scaled format stores beside its elements (None otherwise)."""
        return BLOCK_SCALES.get(self)

    def storage_bytes(self, elements: int) -> float:
        """Bytes that hold `elements` elements: their own bits plus, for a block-scaled format, at
        least one scale per `block` elements (ceil(elements / block) scales: each scale serves at
        most one block, so fewer scales cannot cover the elements)."""
        data = elements * self.bits / 8
        scale = BLOCK_SCALES.get(self)
        if scale is None or elements <= 0:
            return data
        return data + math.ceil(elements / scale.block) * scale.scale_bits / 8

    @staticmethod
    def parse(text: str) -> DType:
        try:
            return _BY_TEXT[text]
        except KeyError:
            known = ", ".join(_BY_TEXT)
            raise IRSyntaxError(f"unknown dtype {text!r}; known: {known}") from None


_BY_TEXT = {d.text: d for d in DType}


@dataclass(frozen=True, slots=True)
class BlockScale:
    """One `scale_format` scale of `scale_bits` bits per `block` consecutive elements."""

    block: int
    scale_bits: int
    scale_format: str
    source: str


_OCP_MX = (
    "OCP Microscaling Formats (MX) Specification v1.0, 2023, sections 5.2 and 6.3: a block of "
    "32 elements shares one E8M0 (8-bit) scale"
)
_NVFP4 = (
    "NVIDIA Blackwell NVFP4 (NVIDIA technical blog 'Introducing NVFP4', 2025; PTX ISA, "
    "tcgen05.mma kind::mxf4nvf4 with scale_vec::4X): a block of 16 E2M1 elements shares one "
    "E4M3 (8-bit) scale; the additional per-tensor FP32 scale is not counted"
)
BLOCK_SCALES: dict[DType, BlockScale] = {
    DType.MXF8E4M3: BlockScale(32, 8, "e8m0", _OCP_MX),
    DType.MXF8E5M2: BlockScale(32, 8, "e8m0", _OCP_MX),
    DType.MXFP4: BlockScale(32, 8, "e8m0", _OCP_MX),
    DType.NVFP4: BlockScale(16, 8, "e4m3", _NVFP4),
}
