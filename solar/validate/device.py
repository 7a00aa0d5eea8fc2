"""The GPU at hand: its properties, the environment a measurement is recorded with, and the spec
that describes it (detected from the device's name, SM count and L2 size)."""

from __future__ import annotations

import ctypes.util
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from solar.errors import SolarError, SpecError

if TYPE_CHECKING:  # the spec model needs pydantic; timing on a bare GPU machine needs only torch
    from solar.hardware import HardwareSpec


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    sm_count: int
    l2_bytes: int
    memory_bytes: int
    compute_capability: str


#: what `validate` and `calibrate` say on a machine without a CUDA device.
NO_CUDA = (
    "no CUDA GPU here: solar validate and calibrate time real kernels and need one "
    "(solar analyze does not); run it on a machine with an NVIDIA GPU"
)

#: the NVIDIA kernel driver's version file, present wherever its driver is loaded (containers included).
NVIDIA_DRIVER = "/proc/driver/nvidia/version"


def no_cuda_driver() -> bool:
    """True when this machine certainly has no CUDA device: no NVIDIA kernel driver loaded and no
    CUDA driver library (libcuda) to be found, known without importing torch. False means there may
    be one (require_cuda asks torch)."""
    return not Path(NVIDIA_DRIVER).exists() and ctypes.util.find_library("cuda") is None


def check_cuda_driver() -> None:
    """The one-line error of require_cuda, at once, where no_cuda_driver() says there is no device."""
    if no_cuda_driver():
        raise SolarError(NO_CUDA)


def require_cuda():
    """torch with a CUDA device, or a one-line error."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        raise SolarError("solar validate needs PyTorch with CUDA; install torch for your GPU") from None
    if not torch.cuda.is_available():
        raise SolarError(NO_CUDA)
    return torch


def query_device(index: int = 0) -> DeviceInfo:
    torch = require_cuda()
    p = torch.cuda.get_device_properties(index)
    return DeviceInfo(
        name=p.name,
        sm_count=int(p.multi_processor_count),
        l2_bytes=int(p.L2_cache_size),
        memory_bytes=int(p.total_memory),
        compute_capability=f"{p.major}.{p.minor}",
    )


def detect_spec(info: DeviceInfo) -> HardwareSpec:
    """The spec whose name or alias is the device's name and whose SM count matches; otherwise the
    unique spec with the same SM count and compute capability. Anything else is an error asking for
    --arch: a wrong spec would make every bound meaningless."""
    from solar.hardware import list_specs

    name = info.name.strip().casefold()
    specs = list_specs()
    by_name = [
        s for s in specs
        if name in {s.name.casefold(), *(a.casefold() for a in s.aliases)} and int(s.sm_count.value) == info.sm_count
    ]
    if len(by_name) == 1:
        return by_name[0]
    by_shape = [
        s for s in specs
        if int(s.sm_count.value) == info.sm_count and s.compute_capability == info.compute_capability
    ]
    if len(by_shape) == 1 and not by_name:
        return by_shape[0]
    candidates = ", ".join(s.name for s in (by_name or by_shape)) or "none"
    raise SpecError(
        f"cannot tell which spec describes GPU {info.name!r} ({info.sm_count} SMs, "
        f"{info.l2_bytes / 2**20:g} MiB L2, cc {info.compute_capability}); candidates: {candidates}; "
        "pass --arch NAME"
    )


def environment() -> dict[str, str]:
    """GPU, driver, torch, CUDA and clocks, recorded with every measurement."""
    torch = require_cuda()
    env = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
    }
    fields = "driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        ).stdout.strip().splitlines()
        if out:
            for key, value in zip(fields.split(","), out[0].split(",")):
                env[key] = value.strip()
    except (OSError, subprocess.SubprocessError):
        env["driver_version"] = "unknown (nvidia-smi not available)"
    return env


__all__ = [
    "NO_CUDA",
    "DeviceInfo",
    "asdict",
    "check_cuda_driver",
    "detect_spec",
    "environment",
    "no_cuda_driver",
    "query_device",
    "require_cuda",
]
