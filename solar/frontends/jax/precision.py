"""Which fp32 contractions JAX lets run on TF32 (or narrower) tensor cores, from the config value
`jax_default_matmul_precision` read at trace time and the `precision` parameter of each
dot_general / conv_general_dilated.

On GPUs JAX's DEFAULT precision computes fp32 products in TF32; `HIGHEST` (config "highest" /
"float32") keeps them fp32. Algorithm presets name their operand type directly: a bf16/f16 preset
rounds the operands to that type, which the IR states with casts so the products are priced on
that tensor-core path."""

from __future__ import annotations

from typing import Any

from jax import lax

from solar.ir.dtypes import DType

CONFIG_KEY = "jax_default_matmul_precision"
# Config values that keep fp32 contractions in fp32; every other value (None, "default", "high",
# "bfloat16", "tensorfloat32", ...) lets them use TF32 on a GPU.
NO_TF32_CONFIG = frozenset({"highest", "float32", "F32_F32_F32", "F64_F64_F64"})

_P = lax.DotAlgorithmPreset
# preset -> (TF32 allowed for fp32 operands, dtype the preset rounds operands to); None = the
# config's default.
PRESETS: dict[Any, tuple[bool | None, DType | None]] = {
    _P.DEFAULT: (None, None),
    _P.ANY_F8_ANY_F8_F32: (None, None),
    _P.ANY_F8_ANY_F8_F32_FAST_ACCUM: (None, None),
    _P.ANY_F8_ANY_F8_ANY: (None, None),
    _P.ANY_F8_ANY_F8_ANY_FAST_ACCUM: (None, None),
    _P.F16_F16_F16: (True, DType.F16),
    _P.F16_F16_F32: (True, DType.F16),
    _P.BF16_BF16_BF16: (True, DType.BF16),
    _P.BF16_BF16_F32: (True, DType.BF16),
    _P.BF16_BF16_F32_X3: (True, DType.BF16),
    _P.BF16_BF16_F32_X6: (True, DType.BF16),
    _P.BF16_BF16_F32_X9: (True, DType.BF16),
    _P.TF32_TF32_F32: (True, None),
    _P.TF32_TF32_F32_X3: (True, None),
    _P.F32_F32_F32: (False, None),
    _P.F64_F64_F64: (False, None),
}


def config_value() -> str | None:
    import jax

    value = getattr(jax.config, CONFIG_KEY)
    return None if value is None else str(value)


def config_allows_tf32(value: str | None) -> bool:
    return value not in NO_TF32_CONFIG


def flags() -> tuple[tuple[str, bool], ...]:
    """The precision setting as read now, for the report (`name=value` per flag)."""
    value = config_value()
    return ((f"jax.config.{CONFIG_KEY}={value!r}, so allow_tf32", config_allows_tf32(value)),)


def allow_tf32(precision: Any, default: bool) -> bool:
    """Whether an fp32 contraction with this `precision` parameter may use TF32 tensor cores.

    A pair of lax.Precision values keeps fp32 only when both are HIGHEST (when in doubt the faster
    hardware path is assumed: a bound must stay below any real run)."""
    if precision is None:
        return default
    if isinstance(precision, lax.DotAlgorithmPreset):
        tf32, _ = PRESETS[precision]
        return default if tf32 is None else tf32
    if isinstance(precision, (tuple, list)):
        return not all(p == lax.Precision.HIGHEST for p in precision)
    return precision != lax.Precision.HIGHEST


def operand_dtype(precision: Any) -> DType | None:
    """The dtype a preset rounds contraction operands to (None: the operands' own)."""
    if isinstance(precision, lax.DotAlgorithmPreset):
        return PRESETS[precision][1]
    return None
