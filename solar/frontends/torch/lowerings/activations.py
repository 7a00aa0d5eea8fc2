"""Activations that core ATen keeps whole: elu (also selu, which is elu with fixed constants).
Every other activation (relu6, hardtanh, hardsigmoid, hardswish, softplus, softsign, mish,
logsigmoid, threshold, prelu, glu, celu, tanhshrink, ...) decomposes into ops of the elementwise
table in core.py; tests/frontends/test_torch_coverage.py checks each of them end to end."""

from __future__ import annotations

from typing import Any

import torch

from solar.frontends.builder import Term, call, elementwise, mul
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.scalar_ops import ScalarOp as S

aten = torch.ops.aten


def _scaled(t: Term, k: Any) -> Term:
    """t·k, with no multiply when k is 1 (no redundant op is counted)."""
    return t if k == 1 else mul(t, k)


@lower(aten.elu.default)
def _elu(ctx: LowerCtx, x: View, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1) -> View:
    """scale·x for x > 0, else scale·alpha·(exp(input_scale·x) - 1)."""

    def fn(t: Term) -> Term:
        negative = _scaled(call(S.EXPM1, _scaled(t, input_scale)), alpha * scale)
        return call(S.WHERE, call(S.GT, t, 0.0), _scaled(t, scale), negative)

    return elementwise(ctx.b, ctx.hint, ctx.shape, ctx.dtype, [x], fn)
