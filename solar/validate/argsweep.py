"""The argument-class sweep (docs/BOUNDS.md §17, *Argument classes*): the hot-loop host time of one
call (warm_slope, as the op floors are measured) of the ops whose host time depends on their
arguments (conv2d, batch_norm, cat; linear, relu and add_ beside them), from the calibration's tiny
instance up to a batch-8 ResNet stage, in float32, float16 and bfloat16, with the argument variants
(bias, stride and widening, kernel size, groups, memory format, batch-norm mode and rank, the number
of concatenated inputs) and the
cuDNN settings a user may change; each row carries its argument class (the tokens of
solar.frontends.argclass, read from its tensors as the frontend reads them from a graph). And
the class floors such sweeps give: per op and class of CLASSES, the least host time of a swept
call whose tokens include the class's. Used by `solar calibrate --dispatch-only` (one sweep) and by
benchmarks/host_profiles.py (the committed sweeps of each host, benchmarks/dispatch_shapes.py)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from solar.errors import message_line
from solar.frontends.argclass import features, text
from solar.validate.dispatch import host_slope, warm_slope

# (N, C, H) of a square activation: the calibration's tiny instance, then batch-1 and batch-8 stages,
# and the channel counts around where a 3x3 convolution's host time was seen to rise (8 to 16)
SIZES = {"tiny": (2, 8, 8), "b1_c16_112": (1, 16, 112), "b1_c64_56": (1, 64, 56), "b1_c256_14": (1, 256, 14),
         "b1_c512_7": (1, 512, 7), "b8_c64_56": (8, 64, 56), "b1_c8_56": (1, 8, 56), "b1_c12_56": (1, 12, 56),
         "b1_c24_56": (1, 24, 56), "b1_c32_56": (1, 32, 56)}
DTYPES = ("float32", "float16", "bfloat16")
# cuDNN settings a user may change (torch.backends.cudnn.flags; the default first): the engine cuDNN
# picks, and with it the host time of a convolution, may follow them. Applied to the dense 3x3 cases.
CUDNN_MODES = {"": {}, " cudnn_benchmark": {"benchmark": True}, " no_tf32": {"allow_tf32": False}}


Case = tuple[Callable[[], object], frozenset[str], dict[str, bool]]


def cases(torch: Any, dev: str, sizes: dict[str, tuple[int, int, int]] = SIZES,
          dtypes: tuple[str, ...] = DTYPES) -> dict[tuple[str, str], Case]:
    """(op, case) -> a call of it, its argument class (solar.frontends.argclass) and the cuDNN
    flags it runs under (CUDNN_MODES)."""
    F = torch.nn.functional
    out: dict[tuple[str, str], Case] = {}

    def conv(x: Any, w: Any, b: Any = None, stride: int = 1, padding: int = 0, groups: int = 1) -> Case:
        return (lambda: F.conv2d(x, w, b, stride=stride, padding=padding, groups=groups),
                features("torch.nn.functional.conv2d", (x, w, b, stride, padding, 1, groups)), {})

    for dt_name in dtypes:
        dt = getattr(torch, dt_name)
        for size, (n, c, h) in sizes.items():
            x = torch.randn(n, c, h, h, device=dev, dtype=dt)
            w3, w1 = torch.randn(c, c, 3, 3, device=dev, dtype=dt), torch.randn(c, c, 1, 1, device=dev, dtype=dt)
            wd, b = torch.randn(c, 1, 3, 3, device=dev, dtype=dt), torch.randn(c, device=dev, dtype=dt)
            w2, w7 = torch.randn(2 * c, c, 3, 3, device=dev, dtype=dt), torch.randn(c, c, 7, 7, device=dev, dtype=dt)
            rm, rv = torch.zeros(c, device=dev, dtype=dt), torch.ones(c, device=dev, dtype=dt)  # as model.half() leaves them
            wf, bf = torch.ones(c, device=dev, dtype=dt), torch.zeros(c, device=dev, dtype=dt)
            m, lw = torch.randn(n, c, device=dev, dtype=dt), torch.randn(c, c, device=dev, dtype=dt)
            xl = x.contiguous(memory_format=torch.channels_last)

            def bn(x: Any, training: bool = False, rm: Any = rm, rv: Any = rv, w: Any = wf, b: Any = bf) -> Case:
                return (lambda: F.batch_norm(x, rm, rv, w, b, training=training),
                        features("torch.nn.functional.batch_norm", (x, rm, rv, w, b, training)), {})

            k = f"{dt_name} {size}"
            for mode, flags in CUDNN_MODES.items():
                out |= {("conv2d", f"{k} 3x3{mode}"): (*conv(x, w3, padding=1)[:2], flags),
                        ("conv2d", f"{k} 3x3 bias{mode}"): (*conv(x, w3, b, padding=1)[:2], flags)}
            out |= {
                ("conv2d", f"{k} 3x3 stride2 widen"): conv(x, w2, stride=2, padding=1),
                ("conv2d", f"{k} 7x7 stride2"): conv(x, w7, stride=2, padding=3),
                ("conv2d", f"{k} 1x1"): conv(x, w1),
                ("conv2d", f"{k} depthwise"): conv(x, wd, padding=1, groups=c),
                ("conv2d", f"{k} 3x3 channels_last"): conv(xl, w3.contiguous(memory_format=torch.channels_last), padding=1),
                ("batch_norm", f"{k} eval"): bn(x),
                ("batch_norm", f"{k} train"): bn(x, training=True),
                ("batch_norm", f"{k} eval 3-D"): bn(x.flatten(2)),
                ("batch_norm", f"{k} eval 2-D"): bn(m),
                ("linear", f"{k}"): (lambda m=m, w=lw: F.linear(m, w), frozenset(), {}),
                ("linear", f"{k} bias"): (lambda m=m, w=lw, b=b: F.linear(m, w, b), frozenset(), {}),
                ("relu", f"{k}"): (lambda x=x: F.relu(x), frozenset(), {}),
                ("add_", f"{k}"): (lambda x=x: x.add_(x), frozenset(), {}),
            }
            for t, n in ((x, 2), (x, 4), (x, 8), (x, 32), (m, 8), (m, 32)):  # along the channels, as CNN blocks join branches
                parts = [t] * n
                out[("cat", f"{k} rank{t.dim()} x{n}")] = (lambda parts=parts: torch.cat(parts, 1),
                                                            features("torch.cat", (parts, 1)), {})
    return out


# The classes a calibration derives floors for (tokens as argclass writes them): those whose every
# swept size lay above the op's floor by a uniform step on the H100's host (BOUNDS §17).
CLASSES = {
    "aten.batch_norm.default": ("affine half params_half stats", "affine float32 rank4 stats train",
                                "affine eval float32 rank2 stats"),
    "aten.conv2d.default": ("cin>=64 dense float32 kernel3x3 nchw undilated", "cin>=16 dense half kernel3x3 nchw undilated",
                            "bias dense kernel3x3 nchw undilated", "bias cin>=64 dense float32 kernel3x3 nchw undilated",
                            "bias cin>=16 dense half kernel3x3 nchw undilated", "cin>=16 dense half kernel7x7 nchw undilated"),
    "aten.cat.default": ("inputs>=8", "inputs>=32"),  # a DenseNet block joins up to 48 four-dimensional inputs
}
SWEPT_OP = {"conv2d": "aten.conv2d.default", "batch_norm": "aten.batch_norm.default", "cat": "aten.cat.default"}  # a row's op -> its ATen op


def sweep(torch: Any, dev: str, only: Iterable[str] | None = None, sizes: dict[str, tuple[int, int, int]] = SIZES,
          dtypes: tuple[str, ...] = DTYPES, extra: Callable[[Callable[[], object]], dict] | None = None,
          on_row: Callable[[dict], object] | None = None) -> list[dict]:
    """One row per case: {"op", "case", "features", "empty_us", "host_us"} (plus what `extra(fn)`
    adds; "error" for a case the backend refuses), each handed to `on_row` as it is measured."""
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    cudnn = torch.backends.cudnn
    default = {"enabled": cudnn.enabled, "benchmark": cudnn.benchmark, "deterministic": cudnn.deterministic,
               "allow_tf32": cudnn.allow_tf32}
    empty_us = round(host_slope(lambda: None, sync) * 1e6, 4)  # an empty call's, as the calibration subtracts
    wanted = set(only) if only else None
    rows = []
    with torch.no_grad():
        for (op, case), (fn, tokens, flags) in cases(torch, dev, sizes, dtypes).items():
            if wanted is not None and op not in wanted:
                continue
            row: dict = {"op": op, "case": case, "features": text(tokens), "empty_us": empty_us}
            try:
                with cudnn.flags(**{**default, **flags}):
                    row |= {"host_us": round(warm_slope(fn, sync) * 1e6, 3), **(extra(fn) if extra else {})}
            except Exception as exc:  # noqa: BLE001  (a case the backend refuses is its row)
                row["error"] = f"{type(exc).__name__}: {message_line(exc)}"[:300]
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def class_floors(sweeps: Sequence[Sequence[dict]], empty_seconds: float = 0.0, min_sweeps: int = 1) -> dict[str, dict[str, float]]:
    """Per op and CLASSES entry that at least `min_sweeps` of the `sweeps` (each one machine
    start's rows) have members of: the least host seconds of a member call less an empty call's
    (the row's `empty_us`, else `empty_seconds`)."""
    out: dict[str, dict[str, float]] = {}
    for op, classes in CLASSES.items():
        for cls in classes:
            need, least, seen = set(cls.split()), math.inf, 0
            for rows in sweeps:
                times = [(r["host_us"] - r.get("empty_us", empty_seconds * 1e6)) * 1e-6 for r in rows
                         if SWEPT_OP.get(r["op"]) == op and "host_us" in r and need <= set(r.get("features", "").split())]
                if times:
                    least, seen = min(least, *times), seen + 1
            if seen >= min_sweeps:
                out.setdefault(op, {})[cls] = least
    return out


def above(classes: dict[str, dict[str, float]], ops: dict[str, float], kernel: float) -> dict[str, dict[str, float]]:
    """The class floors that raise their op's floor (the op's entry, else the kernel floor)."""
    out = {op: {c: v for c, v in by.items() if v > ops.get(op, kernel)} for op, by in classes.items()}
    return {op: by for op, by in out.items() if by}


def with_classes(floors: dict, classes: dict[str, dict[str, float]]) -> dict:
    """A host profile's `floors` with `torch_eager_class_seconds` after the op floors: the
    `classes` that raise their op's floor (above), none where no class does."""
    raising = above(classes, floors["torch_eager_op_seconds"], floors["torch_eager_kernel_seconds"])
    if not raising:
        return floors
    rest = {k: v for k, v in floors.items() if k != "torch_eager_op_seconds"}
    return {"torch_eager_op_seconds": floors["torch_eager_op_seconds"], "torch_eager_class_seconds": raising, **rest}
