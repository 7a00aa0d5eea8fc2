"""Every entry of the PyTorch lowering table, checked against the real op on fresh random inputs:
the op runs in PyTorch, its lowering runs in the IR interpreter, and the outputs must agree."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from solar.frontends.torch.check import _error, _lower_node, _tolerance
from solar.frontends.torch.lowerings import LOWERINGS
from solar.ir.interp import run
from solar.ir.verify import verify

aten = torch.ops.aten


@dataclass(frozen=True)
class T:
    """A random input tensor of this shape and dtype (positive: strictly positive values)."""

    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    positive: bool = False


def B(*shape: int) -> T:
    return T(shape, torch.bool)


def P(*shape: int) -> T:
    return T(shape, positive=True)


def F(*shape: int) -> T:
    return T(shape)


# op -> list of (args, kwargs); tensors given as T specs.
CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.relu.default: [((F(3, 5),), {})],
    aten.sigmoid.default: [((F(3, 5),), {})],
    aten.tanh.default: [((F(3, 5),), {})],
    aten.exp.default: [((F(3, 5),), {})],
    aten.exp2.default: [((F(3, 5),), {})],
    aten.log.default: [((P(3, 5),), {})],
    aten.log2.default: [((P(3, 5),), {})],
    aten.log1p.default: [((P(3, 5),), {})],
    aten.expm1.default: [((F(3, 5),), {})],
    aten.sqrt.default: [((P(3, 5),), {})],
    aten.rsqrt.default: [((P(3, 5),), {})],
    aten.reciprocal.default: [((P(3, 5),), {})],
    aten.neg.default: [((F(3, 5),), {})],
    aten.abs.default: [((F(3, 5),), {})],
    aten.erf.default: [((F(3, 5),), {})],
    aten.sin.default: [((F(3, 5),), {})],
    aten.cos.default: [((F(3, 5),), {})],
    aten.floor.default: [((F(3, 5),), {})],
    aten.ceil.default: [((F(3, 5),), {})],
    aten.round.default: [((F(3, 5),), {})],
    aten.sign.default: [((F(3, 5),), {})],
    aten.logical_not.default: [((B(3, 5),), {})],
    aten.silu.default: [((F(3, 5),), {})],
    aten.gelu.default: [((F(3, 5),), {}), ((F(3, 5),), {"approximate": "tanh"})],
    aten.leaky_relu.default: [((F(3, 5), 0.2), {})],
    aten.hardtanh.default: [((F(3, 5), -0.5, 0.5), {})],
    aten.clamp.default: [((F(3, 5), -0.5, 0.7), {}), ((F(3, 5), None, 0.7), {})],
    aten.clamp.Tensor: [((F(3, 5), F(3, 5), F(1, 5)), {})],
    aten.clamp_min.default: [((F(3, 5), 0.1), {})],
    aten.clamp_max.default: [((F(3, 5), 0.1), {})],
    aten.pow.Tensor_Scalar: [((F(3, 5), 2), {}), ((F(3, 5), 3), {}), ((P(3, 5), 0.5), {}), ((P(3, 5), 1.7), {}), ((P(3, 5), -1), {})],
    aten.pow.Tensor_Tensor: [((P(3, 5), F(5)), {})],
    aten.pow.Scalar: [((2.0, F(3, 5)), {})],
    aten.add.Tensor: [((F(3, 5), F(5)), {}), ((F(2, 1, 5), F(4, 1)), {"alpha": 2})],
    aten.add.Scalar: [((F(3, 5), 1.5), {})],
    aten.sub.Tensor: [((F(3, 5), F(3, 1)), {}), ((F(3, 5), F(5)), {"alpha": 0.5})],
    aten.sub.Scalar: [((F(3, 5), 1.5), {})],
    aten.rsub.Scalar: [((F(3, 5), 1.5), {})],
    aten.mul.Tensor: [((F(3, 5), F(5)), {})],
    aten.mul.Scalar: [((F(3, 5), 3.0), {})],
    aten.div.Tensor: [((F(3, 5), P(3, 5)), {})],
    aten.div.Scalar: [((F(3, 5), 3.0), {})],
    aten.div.Tensor_mode: [((F(3, 5), P(3, 5)), {"rounding_mode": "floor"}), ((F(3, 5), P(3, 5)), {"rounding_mode": "trunc"})],
    aten.maximum.default: [((F(3, 5), F(5)), {})],
    aten.minimum.default: [((F(3, 5), F(5)), {})],
    aten.eq.Tensor: [((F(3, 5), F(3, 5)), {})],
    aten.eq.Scalar: [((F(3, 5), 0.0), {})],
    aten.ne.Tensor: [((F(3, 5), F(3, 5)), {})],
    aten.ne.Scalar: [((F(3, 5), 0.0), {})],
    aten.lt.Tensor: [((F(3, 5), F(3, 5)), {})],
    aten.lt.Scalar: [((F(3, 5), 0.0), {})],
    aten.le.Tensor: [((F(3, 5), F(3, 5)), {})],
    aten.le.Scalar: [((F(3, 5), 0.0), {})],
    aten.gt.Tensor: [((F(3, 5), F(3, 5)), {})],
    aten.gt.Scalar: [((F(3, 5), 0.0), {})],
    aten.ge.Tensor: [((F(3, 5), F(3, 5)), {})],
    aten.ge.Scalar: [((F(3, 5), 0.0), {})],
    aten.logical_and.default: [((B(3, 5), B(3, 5)), {})],
    aten.logical_or.default: [((B(3, 5), B(3, 5)), {})],
    aten.logical_xor.default: [((B(3, 5), B(3, 5)), {})],
    aten.where.self: [((B(3, 5), F(3, 5), F(5)), {})],
    aten._to_copy.default: [((F(3, 5),), {"dtype": torch.float16}), ((F(3, 5),), {"dtype": torch.float32})],
    aten.clone.default: [((F(3, 5),), {})],
    aten.alias.default: [((F(3, 5),), {})],
    aten.lift_fresh_copy.default: [((F(3, 5),), {})],
    aten.detach.default: [((F(3, 5),), {})],
    aten.view.default: [((F(4, 6), [2, 12]), {}), ((F(2, 3, 4), [6, 4]), {})],
    aten._unsafe_view.default: [((F(4, 6), [3, 8]), {})],
    aten.reshape.default: [((F(4, 6), [8, -1]), {})],
    aten.permute.default: [((F(2, 3, 4), [2, 0, 1]), {})],
    aten.t.default: [((F(3, 5),), {})],
    aten.transpose.int: [((F(2, 3, 4), 0, 2), {})],
    aten.expand.default: [((F(3, 1), [2, 3, 4]), {})],
    aten.slice.Tensor: [((F(6, 5), 0, 1, 5, 2), {}), ((F(6, 5), 1, -3), {})],
    aten.select.int: [((F(6, 5), 1, -2), {})],
    aten.unsqueeze.default: [((F(3, 5), 1), {})],
    aten.squeeze.dim: [((F(3, 1, 5), 1), {})],
    aten.squeeze.dims: [((F(3, 1, 5, 1), [1, 3]), {})],
    aten.squeeze.default: [((F(1, 3, 1),), {})],
    aten.cat.default: [(([F(2, 3), F(4, 3)],), {}), (([F(2, 3), F(2, 1), F(2, 2)], 1), {})],
    aten.split_with_sizes.default: [((F(3, 7), [2, 5], 1), {})],
    aten.split.Tensor: [((F(7, 3), 3), {})],
    aten.unbind.int: [((F(3, 2, 4), 1), {})],
    aten.repeat.default: [((F(2, 3), [2, 1, 3]), {})],
    aten.full.default: [(([2, 3], 1.5), {})],
    aten.scalar_tensor.default: [((2.5,), {})],
    aten.arange.start_step: [((2, 11, 3), {"dtype": torch.int64})],
    aten.sum.dim_IntList: [((F(3, 4, 5), [1]), {}), ((F(3, 4, 5), [0, 2], True), {})],
    aten.sum.default: [((F(3, 4, 5),), {})],
    aten.mean.dim: [((F(3, 4, 5), [-1]), {}), ((F(3, 4, 5), [0, 1], True), {})],
    aten.mean.default: [((F(3, 4, 5),), {})],
    aten.amax.default: [((F(3, 4, 5), [1]), {}), ((F(3, 4, 5), [0, 2], True), {})],
    aten.amin.default: [((F(3, 4, 5), [2]), {})],
    aten._softmax.default: [((F(3, 4, 5), -1, False), {}), ((F(3, 4, 5), 1, False), {})],
    aten._log_softmax.default: [((F(3, 4, 5), -1, False), {}), ((F(3, 4, 5), 0, False), {})],
    aten.native_layer_norm.default: [((F(2, 3, 8), [8], F(8), F(8), 1e-5), {}), ((F(2, 3, 8), [3, 8], None, None, 1e-5), {})],
    aten.mm.default: [((F(5, 7), F(7, 3)), {})],
    aten.bmm.default: [((F(2, 5, 7), F(2, 7, 3)), {})],
    aten.addmm.default: [((F(3), F(5, 7), F(7, 3)), {}), ((F(5, 3), F(5, 7), F(7, 3)), {"beta": 0.5, "alpha": 2.0})],
    aten.convolution.default: [
        ((F(2, 4, 9, 9), F(6, 2, 3, 3), F(6), [2, 2], [1, 1], [1, 1], False, [0, 0], 2), {}),
        ((F(2, 4, 9, 8), F(4, 1, 3, 3), None, [1, 1], [2, 2], [2, 2], False, [0, 0], 4), {}),
        ((F(2, 3, 11), F(5, 3, 4), F(5), [3], [0], [1], False, [0], 1), {}),
        ((F(1, 4, 5, 5), F(4, 3, 3, 3), F(3), [2, 2], [1, 1], [1, 1], True, [1, 1], 1), {}),
        ((F(1, 4, 5, 6), F(4, 2, 3, 2), None, [2, 1], [0, 1], [1, 2], True, [0, 0], 2), {}),
        ((F(1, 2, 5, 6, 4), F(4, 2, 3, 2, 2), F(4), [2, 1, 1], [1, 0, 1], [1, 2, 1], False, [0, 0, 0], 1), {}),
        ((F(1, 4, 3, 4, 3), F(4, 1, 2, 3, 2), None, [2, 2, 1], [0, 1, 0], [1, 1, 2], True, [1, 0, 0], 2), {}),
    ],
}


def _realise(x: Any, gen: torch.Generator) -> Any:
    if isinstance(x, T):
        if x.dtype == torch.bool:
            return torch.rand(x.shape, generator=gen) > 0.5
        t = torch.randn(x.shape, generator=gen, dtype=torch.float32)
        return (t.abs() + 0.1 if x.positive else t).to(x.dtype)
    if isinstance(x, list):
        return [_realise(v, gen) for v in x]
    return x


def test_every_lowering_has_a_case():
    missing = sorted(str(op) for op in LOWERINGS if op not in CASES)
    assert not missing, f"lowerings without a test case: {missing}"


@pytest.mark.parametrize(
    "op,args,kwargs",
    [(op, args, kwargs) for op, cases in CASES.items() for args, kwargs in cases],
    ids=lambda x: str(x) if hasattr(x, "_schema") else None,
)
@pytest.mark.parametrize("seed", [0, 1])
def test_lowering_matches_real_op(op, args, kwargs, seed):
    gen = torch.Generator().manual_seed(1000 + seed)
    real = _realise(list(args), gen)
    with torch.no_grad():
        ref = op(*real, **kwargs)
    node = SimpleNamespace(target=op, name=str(op).split(".")[1], kwargs=kwargs)
    program, names, feed, _ = _lower_node(node, real, ref)
    verify(program)
    outs = run(program, feed)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    for name, r in zip(names, refs):
        assert _error(outs[name], r) <= max(_tolerance(r.dtype), 1e-6), (op, name, str(program))
