"""What an op's host time depends on: the hot-loop host time of one call (solar.validate.dispatch
warm_slope, as `solar calibrate --dispatch-only` measures its tiny instances) of the ops that carry
most of the eager_host floors (conv2d, batch_norm, linear, relu, add_) across argument classes: size
(the calibration's tiny instance up to a batch-8 ResNet stage, with the channel counts between), dtype,
eval or training batch norm and its input's rank, bias, stride and widening, kernel size, memory
format; beside it the device time per call (CUDA events over the same loop), so a case
whose device time exceeds its host time is marked. One JSON line per case:

    {"op", "case", "host_us", "device_us", "environment"}   ("error" for a case the backend refuses)

    python benchmarks/dispatch_shapes.py --out OUT.jsonl [--device cuda|cpu]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.eager_host_gap import environment  # noqa: E402
from benchmarks.rows import error_line  # noqa: E402

# (N, C, H) of a square activation: the calibration's tiny instance, then batch-1 and batch-8 stages,
# and the channel counts around where a 3x3 convolution's host time was seen to rise (8 to 16)
SIZES = {"tiny": (2, 8, 8), "b1_c16_112": (1, 16, 112), "b1_c64_56": (1, 64, 56), "b1_c256_14": (1, 256, 14),
         "b1_c512_7": (1, 512, 7), "b8_c64_56": (8, 64, 56), "b1_c8_56": (1, 8, 56), "b1_c12_56": (1, 12, 56),
         "b1_c24_56": (1, 24, 56), "b1_c32_56": (1, 32, 56)}
DTYPES = ("float32", "float16", "bfloat16")


def cases(torch: Any, dev: str) -> dict[tuple[str, str], Callable[[], object]]:
    """(op, case) -> a call of it."""
    F = torch.nn.functional
    out: dict[tuple[str, str], Callable[[], object]] = {}
    for dt_name in DTYPES:
        dt = getattr(torch, dt_name)
        for size, (n, c, h) in SIZES.items():
            x = torch.randn(n, c, h, h, device=dev, dtype=dt)
            w3, w1 = torch.randn(c, c, 3, 3, device=dev, dtype=dt), torch.randn(c, c, 1, 1, device=dev, dtype=dt)
            wd, b = torch.randn(c, 1, 3, 3, device=dev, dtype=dt), torch.randn(c, device=dev, dtype=dt)
            w2, w7 = torch.randn(2 * c, c, 3, 3, device=dev, dtype=dt), torch.randn(c, c, 7, 7, device=dev, dtype=dt)
            rm, rv = torch.zeros(c, device=dev, dtype=dt), torch.ones(c, device=dev, dtype=dt)  # as model.half() leaves them
            wf, bf = torch.ones(c, device=dev, dtype=dt), torch.zeros(c, device=dev, dtype=dt)
            m, lw = torch.randn(n, c, device=dev, dtype=dt), torch.randn(c, c, device=dev, dtype=dt)
            xl = x.contiguous(memory_format=torch.channels_last)
            k = f"{dt_name} {size}"
            out |= {
                ("conv2d", f"{k} 3x3"): lambda x=x, w=w3: F.conv2d(x, w, padding=1),
                ("conv2d", f"{k} 3x3 bias"): lambda x=x, w=w3, b=b: F.conv2d(x, w, b, padding=1),
                ("conv2d", f"{k} 3x3 stride2 widen"): lambda x=x, w=w2: F.conv2d(x, w, stride=2, padding=1),
                ("conv2d", f"{k} 7x7 stride2"): lambda x=x, w=w7: F.conv2d(x, w, stride=2, padding=3),
                ("conv2d", f"{k} 1x1"): lambda x=x, w=w1: F.conv2d(x, w),
                ("conv2d", f"{k} depthwise"): lambda x=x, w=wd, c=c: F.conv2d(x, w, groups=c, padding=1),
                ("conv2d", f"{k} 3x3 channels_last"): lambda x=xl, w=w3.contiguous(memory_format=torch.channels_last):
                    F.conv2d(x, w, padding=1),
                ("batch_norm", f"{k} eval"): lambda x=x, rm=rm, rv=rv, w=wf, b=bf: F.batch_norm(x, rm, rv, w, b),
                ("batch_norm", f"{k} train"): lambda x=x, rm=rm, rv=rv, w=wf, b=bf:
                    F.batch_norm(x, rm, rv, w, b, training=True),
                ("batch_norm", f"{k} eval 3-D"): lambda x=x.flatten(2), rm=rm, rv=rv, w=wf, b=bf:
                    F.batch_norm(x, rm, rv, w, b),
                ("batch_norm", f"{k} eval 2-D"): lambda x=m, rm=rm, rv=rv, w=wf, b=bf: F.batch_norm(x, rm, rv, w, b),
                ("linear", f"{k}"): lambda m=m, w=lw: F.linear(m, w),
                ("linear", f"{k} bias"): lambda m=m, w=lw, b=b: F.linear(m, w, b),
                ("relu", f"{k}"): lambda x=x: F.relu(x),
                ("add_", f"{k}"): lambda x=x: x.add_(x),
            }
    return out


def device_us(torch: Any, fn: Callable[[], object], calls: int = 32) -> float:
    """Device time per call over `calls` back-to-back calls (CUDA events), µs."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / calls


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda when available")
    p.add_argument("--only", nargs="*", default=None, help="ops to measure (default: all)")
    args = p.parse_args(argv)
    import torch

    from solar.validate.dispatch import warm_slope

    dev = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    env = environment(dev)
    with torch.no_grad(), args.out.open("a") as out:
        for (op, case), fn in cases(torch, dev).items():
            if args.only and op not in args.only:
                continue
            row: dict = {"op": op, "case": case}
            try:
                row |= {"host_us": round(warm_slope(fn, sync) * 1e6, 3),
                        "device_us": round(device_us(torch, fn), 3) if dev == "cuda" else None}
            except Exception as exc:  # noqa: BLE001  (a case the backend refuses is its row)
                row["error"] = error_line(exc)
            out.write(json.dumps({**row, "environment": env}) + "\n")
            print(op, case, row.get("error") or (row["host_us"], row["device_us"]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
