"""`solar calibrate`: measure achievable ceilings of the GPU at hand (DRAM copy bandwidth, dense GEMM
throughput per dtype, SIMT fp32 GEMM throughput, minimum kernel time) and write a calibrated spec
variant: the datasheet values unchanged, the measurements added under `calibrated` with date and
method. Measured ceilings are context ("achievable"), never used in bounds: real kernels beat them."""

from __future__ import annotations

import datetime as _dt
import statistics
from pathlib import Path
from typing import Callable

import yaml

from solar.hardware import get_spec
from solar.hardware.spec import SPEC_DIR
from solar.validate.device import detect_spec, environment, query_device, require_cuda
from solar.validate.dispatch import measure_dispatch, tiny_kernel_graph
from solar.validate.timing import event_seconds


def _median_seconds(fn: Callable[[], object], reps: int = 10, warmup: int = 3) -> float:
    require_cuda()
    return statistics.median(event_seconds(fn, reps, warmup))


def measure_copy(nbytes: int = 4 << 30) -> float:
    """Device-to-device copy bandwidth, bytes read plus bytes written per second."""
    torch = require_cuda()
    src = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    t = _median_seconds(lambda: dst.copy_(src))
    del src, dst
    return 2 * nbytes / t


def measure_gemm(kind: str, n: int = 8192) -> float | None:
    """Dense n^3 GEMM throughput (FLOP/s or OP/s) for one kind on random data; None if unsupported."""
    torch = require_cuda()
    flops = 2 * n**3
    try:
        if kind in ("fp32", "tf32"):
            a, b = (torch.randn(n, n, device="cuda") for _ in range(2))
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
            try:
                t = _median_seconds(lambda: a @ b)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
        elif kind in ("fp16", "bf16"):
            dt = torch.float16 if kind == "fp16" else torch.bfloat16
            a, b = (torch.randn(n, n, device="cuda", dtype=dt) for _ in range(2))
            t = _median_seconds(lambda: a @ b)
        elif kind == "fp8":
            a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
            b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()  # column-major operand
            one = torch.tensor(1.0, device="cuda")
            t = _median_seconds(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
        elif kind == "int8":
            a = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8)
            b = torch.randint(-8, 8, (n, n), device="cuda", dtype=torch.int8).t()  # column-major
            t = _median_seconds(lambda: torch._int_mm(a, b))
        else:
            raise ValueError(kind)
    except (RuntimeError, TypeError, AttributeError):
        return None
    return flops / t


def measure_min_kernel(kernels: int = 1000) -> float:
    """Seconds per kernel of back-to-back tiny kernels replayed from a CUDA graph."""

    return _median_seconds(tiny_kernel_graph(require_cuda(), kernels).replay) / kernels


def calibrate(
    out: str | Path | None = None, arch: str | None = None, dispatch_only: bool = False,
    raw: str | Path | None = None,
) -> dict:
    """Measure, then write `out` (default: hardware_specs/calibrated/<name>.yaml): the datasheet spec
    with a `calibrated` section and a `dispatch` section (solar.validate.dispatch). Returns the
    measurements. `dispatch_only`: measure the dispatch floors alone and keep the ceilings of the
    existing calibrated spec. `raw`: also write the dispatch measurements there as JSON."""
    import json


    info = query_device()
    spec = detect_spec(info) if arch is None else get_spec(arch)
    dispatch = measure_dispatch(info.l2_bytes, info.sm_count)
    if raw:
        Path(raw).write_text(json.dumps({"gpu": info.name, **dispatch}, indent=2) + "\n")
    if dispatch_only:
        existing = SPEC_DIR / "calibrated" / f"{spec.name}.yaml"
        data = yaml.safe_load((existing if existing.is_file() else SPEC_DIR / f"{spec.name}.yaml").read_text())
        data["dispatch"] = dispatch
        return _write(data, spec.name, out, {"dispatch": dispatch})
    env = environment()
    when = _dt.date.today().isoformat()
    where = f"{env.get('gpu')}, driver {env.get('driver_version')}, torch {env.get('torch')}, CUDA {env.get('cuda')}"
    measured: dict[str, dict] = {}

    def put(key: str, value: float | None, method: str) -> None:
        if value:
            measured[key] = {"value": float(value), "source": f"measured {when} on {where}: {method}"}

    put("dram_copy_bytes_per_s", measure_copy(), "torch copy_ of a 4 GiB fp32 tensor, bytes read + written, median of 10 (CUDA events)")
    for kind in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8"):
        put(f"gemm_{kind}_flops_per_s", measure_gemm(kind), f"8192^3 {kind} GEMM on random data through PyTorch (cuBLAS), median of 10")
    put("min_kernel_seconds", measure_min_kernel(), "1000 one-element add_ kernels captured in a CUDA graph, replay time / 1000, median of 10")
    data = yaml.safe_load((SPEC_DIR / f"{spec.name}.yaml").read_text())
    data["calibrated"] = measured
    data["dispatch"] = dispatch
    return _write(data, spec.name, out, {**measured, "dispatch": dispatch})


def _write(data: dict, name: str, out: str | Path | None, measured: dict) -> dict:
    path = Path(out) if out else SPEC_DIR / "calibrated" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# {name} datasheet spec plus ceilings measured by `solar calibrate` (dates in each source).\n"
        "# The calibrated values are achievable ceilings, shown as context; bounds use the datasheet peaks.\n"
        "# `dispatch`: host dispatch floors of this host and framework (the eager_host level, docs/BOUNDS.md).\n"
    )
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, width=120))
    return measured
