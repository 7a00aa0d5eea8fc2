"""The direct path's rewrites of matmul, chunk, unflatten, where/masked_fill with a scalar, min of two
tensors, the zero and one factories, hardswish/hardsigmoid, adaptive average pooling (1-D, and 2-D to
any size), floor_divide, expand_as, conv_transpose and a forward-built tensor constant (lift_fresh_copy
+ detach_): each the exact decomposition `run_decompositions` produces for it (torch._decomp's matmul
and hardswish, torch._refs' where, masked_fill, zeros*, ATen's chunk, unflatten, linear and
adaptive pooling, functionalization's copy of a lifted constant), for the argument forms it accepts;
any other form raises Unsupported and the caller falls back to the full re-trace. Split from
solar.frontends.torch.direct (see its docstring), which holds the rest of the table."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any, Callable

import torch

from solar.frontends.torch.direct_graph import Unsupported, expand, is_view, mutated, reshape, value_of

aten = torch.ops.aten


# ---- matmul (torch._decomp.decompositions.matmul) --------------------------------------------------


def requires_grad(e, x: Any) -> bool:
    """Whether x requires grad in the re-trace (which runs with grad enabled): x derives from a
    parameter through ops with a floating result (a parameter's value in the training IR says
    so; the values of the nodes computed from it do not)."""
    memo = e.__dict__.setdefault("_grad", {})
    stack = [x] if isinstance(x, torch.fx.Node) else []
    while stack:
        n = stack[-1]
        if n in memo:
            stack.pop()
            continue
        val = n.meta.get("val")
        if n.op == "placeholder" or not isinstance(val, torch.Tensor):
            memo[n] = bool(getattr(val, "requires_grad", False))
        elif not (val.dtype.is_floating_point or val.dtype.is_complex) or n.target in _NO_GRAD:
            memo[n] = False
        else:
            todo = [a for a in n.all_input_nodes if a not in memo]
            if todo:
                stack.extend(todo)
                continue
            memo[n] = any(memo[a] for a in n.all_input_nodes)
        stack.pop()
    return memo.get(x, False) if isinstance(x, torch.fx.Node) else False


_NO_GRAD = frozenset({aten.detach.default})


def _folds(a: Any, b: Any, grads: tuple[bool, bool]) -> bool:
    """should_fold: the larger operand (>= 3 dims) folded into one mm with a matrix or vector."""
    (t1, t2), t2_grad = ((a, b), grads[1]) if a.dim() >= b.dim() else ((b, a), grads[0])
    if not (t1.dim() >= 3 and t2.dim() <= 2):
        return False
    if t2_grad:
        return True
    if a.dim() == 2:
        return False
    expected, step = [], 1
    for s in reversed(list(t1.shape)):
        expected.append(step)
        step *= int(s)
    expected = expected[::-1]
    return all(int(s) == 1 or l == r for l, r, s in zip(t1.stride(), expected, t1.shape))


def matmul(e, a, b, grad: bool = True):
    """matmul as torch._decomp decomposes it: mm for two matrices, one folded mm for a batch times
    a matrix where the batch folds, else expanded, reshaped operands and a bmm. `grad`: whether
    should_fold looks at requires_grad (the top-level op does; the matmul inside linear does not)."""
    av, bv = value_of(a), value_of(b)
    if av.dim() < 2 or bv.dim() < 2 or av.numel() == 0 or bv.numel() == 0:
        raise Unsupported  # dot, mv, vectors, empty tensors
    if av.dim() == 2 and bv.dim() == 2:
        return e.call(aten.mm.default, (a, b))
    grads = (requires_grad(e, a), requires_grad(e, b)) if grad else (False, False)
    if _folds(av, bv, grads):
        if bv.dim() > av.dim():
            raise Unsupported  # the transposed fold (a matrix times a batch)
        shape = list(av.shape)
        flat = reshape(e, a, [math.prod(int(s) for s in shape[:-1]), shape[-1]])
        return e.call(aten._unsafe_view.default, (e.call(aten.mm.default, (flat, b)), shape[:-1] + [int(bv.shape[1])]))
    n, m1 = int(av.shape[-2]), int(av.shape[-1])
    m2, p = int(bv.shape[-2]), int(bv.shape[-1])
    batch = [int(s) for s in torch.broadcast_shapes(av.shape[:-2], bv.shape[:-2])]
    if av.dim() == 3 and bv.dim() == 3 and av.shape[0] != bv.shape[0] and any(grads):
        raise Unsupported  # the squeeze(0) shortcut
    rows = math.prod(int(s) for s in batch)
    left = reshape(e, e.call(aten.expand.default, (a, batch + [n, m1])), [rows, n, m1])
    right = reshape(e, e.call(aten.expand.default, (b, batch + [m2, p])), [rows, m2, p])
    return e.call(aten.view.default, (e.call(aten.bmm.default, (left, right)), batch + [n, p]))


def linear_by_matmul(e, x, w, b=None):
    """ATen's linear where it does not fold: matmul(x, w.t()) (no requires_grad fold) and an
    out-of-place bias add."""
    out = matmul(e, x, e.call(aten.t.default, (w,)), grad=False)
    return out if b is None else e.call(aten.add.Tensor, (out, b))


# ---- shapes ----------------------------------------------------------------------------------------


def _chunk(e, x, chunks, dim=0):
    """ATen's chunk: one split into pieces of ceil(length / chunks)."""
    length = int(value_of(x).shape[dim])
    if chunks <= 0 or length == 0:
        raise Unsupported  # split_with_sizes for an empty dimension
    node = e.call(aten.split.Tensor, (x, math.ceil(length / chunks), dim))
    return tuple(e.items(node))


def _unflatten(e, x, dim, sizes):
    shape = [int(s) for s in value_of(x).shape]
    if any(int(s) < 0 for s in sizes):
        raise Unsupported  # an inferred size
    dim = dim % len(shape)
    return e.call(aten.view.default, (x, shape[:dim] + [int(s) for s in sizes] + shape[dim + 1 :]))


# ---- elementwise -----------------------------------------------------------------------------------


def _scalar(e, x, value, cast: bool) -> torch.fx.Node:
    """scalar_tensor(value) in x's dtype and device; `cast`: the value made x's Python type
    (masked_fill's cast; where promotes the dtype only)."""
    xv = value_of(x)
    if not isinstance(value, Number) or isinstance(value, complex):
        raise Unsupported  # a tensor value
    kind = bool if xv.dtype == torch.bool else (float if xv.dtype.is_floating_point else int)
    if (kind is not float and not isinstance(value, kind)) or (kind is not bool and isinstance(value, bool)):
        raise Unsupported  # type promotion to another dtype; a bool into numbers
    kwargs = {"dtype": xv.dtype, "layout": torch.strided, "device": xv.device}
    return e.call(aten.scalar_tensor.default, (kind(value) if cast else value,), kwargs)


def _where_scalar_other(e, cond, x, other):
    if not isinstance(x, torch.fx.Node):
        raise Unsupported
    return e.call(aten.where.self, (cond, x, _scalar(e, x, other, False)))


def _masked_fill(e, x, mask, value):
    if not value_of(x).is_contiguous():
        raise Unsupported  # the ref's trailing contiguous()
    return e.call(aten.where.self, (mask, _scalar(e, x, value, True), x))


def _minimum(e, a, b):
    return e.call(aten.minimum.default, (a, b))


def _hard(swish: bool) -> Callable:
    """hardswish / hardsigmoid: [x *] clamp(clamp(x + 3, min=0), max=6) / 6 (float32 only: other
    dtypes are computed in float32 and cast back)."""

    def rule(e, x):
        if value_of(x).dtype != torch.float32:
            raise Unsupported
        y = e.call(aten.clamp.default, (e.call(aten.clamp.default, (e.call(aten.add.Tensor, (x, 3)), 0)), None, 6))
        if swish:
            y = e.call(aten.mul.Tensor, (x, y))
        return e.call(aten.div.Tensor, (y, 6))

    return rule


def _in_place(functional: Callable) -> Callable:
    """The in-place form of a rewritten op: its functional decomposition, which later readers of
    the mutated tensor then read (direct._in_place's conditions: no view shares the tensor)."""

    def rule(e, x, *args):
        old = e.origin.args[0]
        if not isinstance(old, torch.fx.Node) or old.op not in ("placeholder", "call_function") or is_view(old):
            raise Unsupported
        if any(is_view(u) for u in old.users):
            raise Unsupported
        new = functional(e, x, *args)
        mutated(e, x, new)
        return new

    return rule


# ---- factories -------------------------------------------------------------------------------------


def _filled(fill: int) -> Callable:
    """zeros / ones: full(size, 0 or 1) in the default dtype (False / True for booleans)."""

    def rule(e, size, dtype=None, layout=None, device=None, pin_memory=None):
        kwargs = {
            "dtype": torch.get_default_dtype() if dtype is None else dtype,
            "layout": torch.strided if layout is None else layout,
            "device": device,
            "pin_memory": False if pin_memory is None else pin_memory,
        }
        return e.call(aten.full.default, (size, bool(fill) if kwargs["dtype"] == torch.bool else fill), kwargs)

    return rule


_zeros = _filled(0)


def _new_zeros(e, x, size, dtype=None, layout=None, device=None, pin_memory=None):
    xv = value_of(x)
    return _zeros(e, size, xv.dtype if dtype is None else dtype, xv.layout if layout is None else layout,
                  xv.device if device is None else device, pin_memory)


def _zeros_like(e, x, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    kwargs = {
        "dtype": dtype, "layout": layout, "device": device, "pin_memory": False if pin_memory is None else pin_memory,
        "memory_format": torch.preserve_format if memory_format is None else memory_format,
    }
    value = False if (dtype or value_of(x).dtype) == torch.bool else 0
    return e.call(aten.full_like.default, (x, value), kwargs)


def _adaptive_avg_pool2d(e, x, size):
    """ATen's adaptive_avg_pool2d: a mean over the last two dims for 1x1 (of a channels-last input
    then as_strided_ to channels-last strides, functionalized to an as_strided), else the pooling op."""
    size = list(size)
    if size != [1, 1]:
        return e.call(aten._adaptive_avg_pool2d.default, (x, size))
    out = e.call(aten.mean.dim, (x, [-1, -2], True))
    xv = value_of(x)
    if xv.dim() == 4 and not xv.is_contiguous() and xv.is_contiguous(memory_format=torch.channels_last):
        n, c = int(xv.shape[0]), int(xv.shape[1])
        out = e.call(aten.as_strided.default, (out, [n, c, 1, 1], [c, 1, c, c]))
    return out


def _adaptive_avg_pool1d(e, x, size):
    """ATen's adaptive_avg_pool1d: the 2-D pooling of x.unsqueeze(-2) to [1, size], squeezed back."""
    size = list(size) if isinstance(size, (list, tuple)) else [size]
    if len(size) != 1:
        raise Unsupported
    pooled = _adaptive_avg_pool2d(e, e.call(aten.unsqueeze.default, (x, -2)), [1, size[0]])
    return e.call(aten.squeeze.dim, (pooled, -2))


def _conv_transpose(n: int) -> Callable:
    def rule(e, x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        if value_of(x).dim() != n + 2:
            raise Unsupported  # an unbatched input
        e_ = [expand(v, n) for v in (stride, padding, dilation, output_padding)]
        return e.call(aten.convolution.default, (x, w, b, e_[0], e_[1], e_[2], True, e_[3], groups))

    return rule


def _expand_as(e, x, other):
    return e.call(aten.expand.default, (x, [int(s) for s in value_of(other).shape]))


def _lift_fresh_copy(e, x):
    """A tensor constant built in forward (torch.tensor(...)): functionalization copies it as clone."""
    return e.call(aten.clone.default, (x,))


def _detach_(e, x):
    """detach_ of such a fresh copy: dropped (it only changes autograd state); elsewhere it falls back."""
    old = e.origin.args[0]
    if not isinstance(old, torch.fx.Node) or old.target is not aten.lift_fresh_copy.default:
        raise Unsupported
    return x


def _floor_divide(e, a, b):
    return e.call(aten.div.Tensor_mode, (a, b), {"rounding_mode": "floor"})


OP_REWRITES: dict[Any, Callable] = {
    aten.matmul.default: matmul,
    aten.chunk.default: _chunk,
    aten.unflatten.int: _unflatten,
    aten.where.ScalarOther: _where_scalar_other,
    aten.masked_fill.Scalar: _masked_fill,
    aten.min.other: _minimum,
    aten.hardswish.default: _hard(True),
    aten.hardswish_.default: _in_place(_hard(True)),
    aten.hardsigmoid.default: _hard(False),
    aten.hardsigmoid_.default: _in_place(_hard(False)),
    aten.zeros.default: _zeros,
    aten.new_zeros.default: _new_zeros,
    aten.zeros_like.default: _zeros_like,
    aten.adaptive_avg_pool2d.default: _adaptive_avg_pool2d,
    aten.adaptive_avg_pool1d.default: _adaptive_avg_pool1d,
    aten.floor_divide.default: _floor_divide,
    aten.ones.default: _filled(1),
    aten.lift_fresh_copy.default: _lift_fresh_copy,
    aten.detach_.default: _detach_,
    aten.expand_as.default: _expand_as,
    aten.conv_transpose1d.default: _conv_transpose(1),
    aten.conv_transpose2d.input: _conv_transpose(2),
    aten.conv_transpose3d.input: _conv_transpose(3),
}
