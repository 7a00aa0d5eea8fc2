"""The argument class of an eager op call: the features of its arguments that its host dispatch
time was measured to depend on (docs/BOUNDS.md §17, *Argument classes*), read the same way from an
exported node's recorded values (the frontend) and from real tensors (the calibration,
benchmarks/dispatch_shapes.py), so that a class calibrated on one applies to the other.

A call's class is a set of tokens: the input's dtype (`float32`, `half` for float16 and bfloat16,
else the dtype's name) and, per op, the facts of a binding table: for a convolution its kernel
(`kernel3x3`), `dense` (one group), `bias`, `nchw` (the input contiguous in the default memory
format), `undilated` and the input channels (`cin>=16`, `cin>=64`); for a batch norm `train` or
`eval`, the input's rank (`rank4`), `affine`, `stats` (running statistics given) and `params_half`
(half-precision parameters); for a concatenation the first input's rank and the number of inputs
(`inputs>=4`, `inputs>=8`, `inputs>=32`). A class floor applies to a call whose tokens include all
of its own.
Only duck-typed tensor reads (dtype, shape, is_contiguous): no allocation, no import of torch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

HALF = ("torch.float16", "torch.bfloat16")
CHANNEL_STEPS = (16, 64)  # `cin>=N` tokens
INPUT_STEPS = (4, 8, 32)  # `inputs>=N` tokens of a concatenation

# Positional parameter names of each op as the frontend (ATen, before decomposition) and the
# calibration (torch.nn.functional) call it.
_CONV = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
_BN_ATEN = ("input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps", "cudnn_enabled")
_BN_F = ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
_CAT = ("input", "dim")


def _dtype(t: Any) -> str:
    """The dtype token of a tensor (of a sequence of tensors: its first's)."""
    if isinstance(t, (list, tuple)):
        t = t[0]
    name = str(getattr(t, "dtype", ""))
    if not name:
        raise TypeError("not a tensor")
    return "half" if name in HALF else name.removeprefix("torch.")


def _pair(v: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in v) if isinstance(v, (list, tuple)) else (int(v), int(v))


def _conv(a: Mapping[str, Any]) -> set[str]:
    x, w, groups = a["input"], a["weight"], int(a.get("groups", 1))
    kernel = tuple(int(k) for k in w.shape[2:])
    cin = int(w.shape[1]) * groups
    tokens = {f"kernel{'x'.join(map(str, kernel))}"} | {f"cin>={n}" for n in CHANNEL_STEPS if cin >= n}
    if groups == 1:
        tokens.add("dense")
    if a.get("bias") is not None:
        tokens.add("bias")
    if x.is_contiguous():
        tokens.add("nchw")
    if all(d == 1 for d in _pair(a.get("dilation", 1))):
        tokens.add("undilated")
    return tokens


def _batch_norm(a: Mapping[str, Any]) -> set[str]:
    x, w = a["input"], a.get("weight")
    tokens = {"train" if a.get("training") else "eval", f"rank{len(x.shape)}"}
    if w is not None:
        tokens.add("affine")
        if _dtype(w) == "half":
            tokens.add("params_half")
    if a.get("running_mean") is not None:
        tokens.add("stats")
    return tokens


def _cat(a: Mapping[str, Any]) -> set[str]:
    tensors = list(a["input"])
    return {f"rank{len(tensors[0].shape)}"} | {f"inputs>={n}" for n in INPUT_STEPS if len(tensors) >= n}


# op -> (positional parameter names, the op's tokens from its bound arguments)
BINDINGS: dict[str, tuple[tuple[str, ...], Callable[[Mapping[str, Any]], set[str]]]] = {
    "aten.conv2d.default": (_CONV, _conv),
    "torch.nn.functional.conv2d": (_CONV, _conv),
    "torch.conv2d": (_CONV, _conv),
    "aten.batch_norm.default": (_BN_ATEN, _batch_norm),
    "torch.nn.functional.batch_norm": (_BN_F, _batch_norm),
    "aten.cat.default": (_CAT, _cat),
    "torch.cat": (_CAT, _cat),
}


# The ATen op (as the frontend names it) of each binding's name as Python calls it.
ATEN_OF = {"torch.nn.functional.conv2d": "aten.conv2d.default", "torch.conv2d": "aten.conv2d.default",
           "torch.nn.functional.batch_norm": "aten.batch_norm.default", "torch.cat": "aten.cat.default"}


def features(op: str, args: Sequence[Any], kwargs: Mapping[str, Any] | None = None) -> frozenset[str]:
    """The tokens of one call of `op` (a key of BINDINGS) with these arguments (tensors, fake
    tensors or anything with dtype, shape and is_contiguous); empty for an op without a binding
    or arguments that cannot be read (its op floor then applies)."""
    binding = BINDINGS.get(op)
    if binding is None:
        return frozenset()
    names, read = binding
    bound = dict(zip(names, args)) | dict(kwargs or {})
    try:
        return frozenset({_dtype(bound["input"])} | read(bound))
    except Exception:  # noqa: BLE001  (missing, symbolic or odd arguments: no class, the op's floor holds)
        return frozenset()


def text(tokens: frozenset[str] | set[str]) -> str:
    """One class as written in host profiles and rows: its tokens sorted, space-separated."""
    return " ".join(sorted(tokens))


def parse(written: str) -> frozenset[str]:
    return frozenset(written.split())
