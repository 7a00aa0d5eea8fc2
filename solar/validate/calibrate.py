"""`solar calibrate`: measure achievable ceilings of the GPU at hand (DRAM copy bandwidth, dense GEMM
throughput per dtype, SIMT fp32 GEMM throughput, minimum kernel time) and write a calibrated spec
variant: the datasheet values unchanged, the measurements added under `calibrated` with date and
method, the device floors under `device_floors`. Measured ceilings are context ("achievable"), never
used in bounds: real kernels beat them. The host dispatch floors go to a host profile
(hardware_specs/hosts/NAME.yaml, solar.hardware.host); `--dispatch-only` measures those alone."""

from __future__ import annotations

import datetime as _dt
import statistics
import sys
from pathlib import Path
from typing import Callable

import yaml

from solar.hardware import get_spec
from solar.hardware.host import DEFAULT_HOST, HOST_DIR, list_hosts
from solar.hardware.spec import SPEC_DIR
from solar.validate.argsweep import class_floors, sweep, with_classes
from solar.validate.device import detect_spec, environment, query_device, require_cuda
from solar.validate.dispatch import measure_dispatch, tiny_kernel_graph
from solar.validate.timing import event_seconds


def say(line: str) -> None:
    """A progress line on stderr (the results go to stdout and files)."""
    print(f"calibrate: {line}", file=sys.stderr, flush=True)


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


HOST_KEYS = ("torch_eager_op_seconds", "torch_eager_kernel_seconds", "torch_eager_any_seconds",
             "torch_empty_module_seconds", "torch_module_seconds", "torch_module_ops_seconds", "torch_rnn_seconds",
             "jax_dispatch_seconds")


def scaled(value: object, k: float) -> object:
    """Every floor in a (nested) floors value times k (a recurrent fit's shape keys kept)."""
    if isinstance(value, dict):
        return {key: v if key in ("hidden", "batch") else scaled(v, k) for key, v in value.items()}
    if isinstance(value, list):
        return [scaled(v, k) for v in value]
    return None if value is None else value * k  # type: ignore[operator]


def host_profile(dispatch: dict, name: str, gpu: str, cuda: str = "", classes: dict | None = None) -> dict:
    """A host profile (solar.hardware.host.HostProfile) from one dispatch calibration: every floor the
    least one-run margin of the committed host profiles (how far one run of theirs sat above their
    least, times their run-to-run spread; their margin where they state none) times this run's; the
    argument classes of its sweep (`classes`: op -> class -> least seconds,
    solar.validate.argsweep.class_floors) where they raise their op's floor."""
    hosts = [h for h in list_hosts() if h.name != DEFAULT_HOST]
    margin = min((h.one_run_margin or h.margin for h in hosts), default=0.4)
    floors = {k: scaled(dispatch[k], margin) for k in HOST_KEYS if dispatch.get(k) not in (None, {})}
    floors = with_classes(floors, scaled(classes or {}, margin))  # type: ignore[arg-type]
    floors["timing_lead_seconds"] = dispatch["timing_lead_seconds"]
    rule = f"{margin:g} x this host's one calibration of {dispatch['date']} (solar calibrate --dispatch-only)"
    sources = {k: rule for k in floors if k != "timing_lead_seconds"}
    if "torch_eager_class_seconds" in floors:
        sources["torch_eager_class_seconds"] = f"{rule}: the least swept call of each argument class (solar.validate.argsweep)"
    sources["timing_lead_seconds"] = "the largest head start seen by this calibration (not scaled)"
    return {
        "name": name, "description": f"a host calibrated with {gpu}", "host_cpu": dispatch["host_cpu"], "gpu": gpu,
        "torch": dispatch["torch"], "cuda": cuda, "jax": dispatch.get("jax", ""), "date": dispatch["date"],
        "method": dispatch["method"], "margin": margin,
        "margin_source": (
            "one calibration: the least one-run margin of the committed host profiles (" + ", ".join(h.name for h in hosts)
            + "; each from how far one run sat above that host's least and its run-to-run spread); calibrate on several "
            "machine starts, commit the raw files under benchmarks/results/ and run benchmarks/host_profiles.py for this host's own"
        ),
        "derived_from": [], "sources": sources, "floors": floors,
    }


def device_floors(dispatch: dict, where: str) -> dict:
    """The calibrated spec's `device_floors` section from one dispatch calibration."""
    out = {
        "cuda_graph_kernel_seconds": {"value": dispatch["cuda_graph_kernel_seconds"], "source": f"measured {where}: replay time / kernels of 1000 one-element kernels in a CUDA graph"},
        "grid_sync_seconds": {"value": dispatch["grid_sync_seconds"], "source": f"measured {where}: least of a CUDA-graph kernel boundary and a grid-wide barrier"},
    }
    if dispatch.get("grid_barrier_seconds"):
        out["grid_barrier_seconds"] = {"value": dispatch["grid_barrier_seconds"], "source": f"measured {where}: grid-wide barrier"}
    return out


def calibrate(
    out: str | Path | None = None, arch: str | None = None, dispatch_only: bool = False,
    raw: str | Path | None = None, host: str = "local",
) -> dict:
    """Measure, then write `out` (default: hardware_specs/calibrated/<name>.yaml): the datasheet spec
    with a `calibrated` and a `device_floors` section, and the host profile `host`
    (hardware_specs/hosts/<host>.yaml). Returns the measurements. `dispatch_only`: measure the
    dispatch floors alone and write only the host profile (to `out` where given). `raw`: also
    write the dispatch measurements there as JSON and the argument-class sweep beside it as
    `dispatch_shapes_<name>.jsonl`, each row naming its run (the stem of `raw`) and environment
    (the inputs of benchmarks/host_profiles.py)."""
    import json

    torch = require_cuda()
    info = query_device()
    spec = detect_spec(info) if arch is None else get_spec(arch)
    say(f"measuring host dispatch floors on {info.name} (under a minute on an H100's host; keep the machine otherwise idle)")
    dispatch = measure_dispatch(info.l2_bytes, info.sm_count)
    swept = None
    if raw:
        Path(raw).write_text(json.dumps({"gpu": info.name, **dispatch}, indent=2) + "\n")
        swept = Path(raw).with_name(f"dispatch_shapes_{Path(raw).stem.removeprefix('dispatch_')}.jsonl")
        swept.write_text("")
        say(f"wrote {raw}; sweeping argument classes into {swept}")
    else:
        say("sweeping argument classes")

    env = environment()

    def keep(row: dict) -> None:  # each row as measured, with its run and environment: a run cut off keeps what it swept
        if swept is not None:
            with swept.open("a") as f:
                f.write(json.dumps({**row, "run": Path(raw).stem, "environment": env}) + "\n")

    shapes = sweep(torch, "cuda", on_row=keep)
    profile = host_profile(dispatch, host, str(env.get("gpu") or info.name), str(env.get("cuda") or ""),
                           class_floors([shapes]))
    host_path = Path(out) if dispatch_only and out else HOST_DIR / f"{host}.yaml"
    host_path.parent.mkdir(parents=True, exist_ok=True)
    host_path.write_text(
        "# Host dispatch floors (docs/BOUNDS.md §17) written by `solar calibrate`.\n"
        + yaml.safe_dump(profile, sort_keys=False, width=120)
    )
    say(f"wrote host profile {host_path}")
    if dispatch_only:
        return {"dispatch": dispatch}
    when = _dt.date.today().isoformat()
    where = f"{env.get('gpu')}, driver {env.get('driver_version')}, torch {env.get('torch')}, CUDA {env.get('cuda')}"
    measured: dict[str, dict] = {}

    def put(key: str, value: float | None, method: str) -> None:
        if value:
            measured[key] = {"value": float(value), "source": f"measured {when} on {where}: {method}"}

    say("measuring ceilings: DRAM copy, dense GEMM per dtype, the shortest kernel")
    put("dram_copy_bytes_per_s", measure_copy(), "torch copy_ of a 4 GiB fp32 tensor, bytes read + written, median of 10 (CUDA events)")
    for kind in ("fp32", "tf32", "fp16", "bf16", "fp8", "int8"):
        put(f"gemm_{kind}_flops_per_s", measure_gemm(kind), f"8192^3 {kind} GEMM on random data through PyTorch (cuBLAS), median of 10")
    put("min_kernel_seconds", measure_min_kernel(), "1000 one-element add_ kernels captured in a CUDA graph, replay time / 1000, median of 10")
    data = yaml.safe_load((SPEC_DIR / f"{spec.name}.yaml").read_text())
    data["calibrated"] = measured
    data["device_floors"] = device_floors(dispatch, f"{when} on {where}")
    return _write(data, spec.name, out, {**measured, "dispatch": dispatch})


def _write(data: dict, name: str, out: str | Path | None, measured: dict) -> dict:
    path = Path(out) if out else SPEC_DIR / "calibrated" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = (
        f"# {name} datasheet spec plus ceilings measured by `solar calibrate` (dates in each source).\n"
        "# The calibrated values are achievable ceilings, shown as context; bounds use the datasheet peaks.\n"
        "# `device_floors`: floors measured on this GPU model (recurrence and graphed levels, docs/BOUNDS.md).\n"
    )
    path.write_text(header + yaml.safe_dump(data, sort_keys=False, width=120))
    say(f"wrote calibrated spec {path}")
    return measured
