"""Tiny KernelBench-layout suites and hand-made result rows for the kernelbench tests."""

from __future__ import annotations

import os
import time
from pathlib import Path

from solar.kernelbench.results import Row

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
FOOTER = "\n\ndef get_init_inputs():\n    return []\n"

RELU = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 32)]
"""
    + FOOTER
)

MATMUL = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(16, 8), torch.randn(8, 4)]
"""
    + FOOTER
)

FFT = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, x):
        return torch.fft.fft(x).real


def get_inputs():
    return [torch.randn(16, 16)]
"""
    + FOOTER
)

SVD = (
    HEADER
    + """class Model(nn.Module):
    def forward(self, x):
        return torch.linalg.svd(x)[1]


def get_inputs():
    return [torch.randn(8, 8)]
"""
    + FOOTER
)

EXIT3 = (
    HEADER
    + """import os


class Model(nn.Module):
    def forward(self, x):
        os._exit(3)


def get_inputs():
    return [torch.randn(4)]
"""
    + FOOTER
)

SEGFAULT = (
    HEADER
    + """import ctypes


class Model(nn.Module):
    def forward(self, x):
        ctypes.string_at(0)
        return x


def get_inputs():
    return [torch.randn(4)]
"""
    + FOOTER
)


def sleeper(pid_file: Path) -> str:
    """A problem that starts a grandchild (writing its pid to `pid_file`) and then sleeps forever."""
    return (
        HEADER
        + f"""import subprocess
import time

child = subprocess.Popen(["sleep", "600"])
open({str(pid_file)!r}, "w").write(str(child.pid))
time.sleep(600)


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]
"""
        + FOOTER
    )


def setsid_hang(pid_file: Path) -> str:
    """A problem whose grandchild leaves the process group (a new session), keeping the worker's
    stdout and stderr open, and which then hangs for good."""
    return (
        HEADER
        + f"""import subprocess
import time

child = subprocess.Popen(["sleep", "600"], start_new_session=True)
open({str(pid_file)!r} + ".tmp", "w").write(str(child.pid))
__import__("os").replace({str(pid_file)!r} + ".tmp", {str(pid_file)!r})
time.sleep(600)


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]
"""
        + FOOTER
    )


def daemon_then_relu(pid_file: Path) -> str:
    """A problem that starts a daemon (fork, setsid, fork: an orphan in a session of its own, holding
    the worker's stdout and stderr) and then analyses fine."""
    return (
        HEADER
        + f"""import os
import time

first = os.fork()
if first == 0:
    os.setsid()
    daemon = os.fork()
    if daemon == 0:
        time.sleep(600)
        os._exit(0)
    open({str(pid_file)!r}, "w").write(str(daemon))
    os._exit(0)
os.waitpid(first, 0)


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8)]
"""
        + FOOTER
    )


#: writes its pid to `pid_file`, kills its parent (the worker's supervisor), then hangs.
PARRICIDE = """import os, time
open({pid_file!r}, "w").write(str(os.getpid()))
os.kill(os.getppid(), 9)
time.sleep(600)
"""


def parricide(pid_file: Path) -> str:
    """A problem that kills its supervisor (the worker's parent) at import and then hangs."""
    return HEADER + PARRICIDE.format(pid_file=str(pid_file)) + FOOTER


def flagged(flag_file: Path, action: str) -> str:
    """A ReLU problem that, while `flag_file` exists, first does `action` (`hang`, `crash`)."""
    act = {"hang": "time.sleep(600)", "crash": "os._exit(3)"}[action]
    return (
        HEADER
        + f"""import os
import time

if os.path.exists({str(flag_file)!r}):
    {act}


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8)]
"""
        + FOOTER
    )


def running(pid: int) -> bool:
    """Whether `pid` runs (zombies, dead and waiting to be reaped, do not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" not in status.read_text()
    except OSError:
        return False


def wait_until(condition, limit_s: float = 30.0) -> bool:
    """Poll `condition` until it holds or `limit_s` passes; its last value."""
    deadline = time.monotonic() + limit_s
    while not (ok := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return ok


def write_suite(root: Path, files: dict[str, str]) -> Path:
    """Write {relative path: source} under `root` and return `root`."""
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


def make_row(
    problem: str,
    arch: str = "H100-SXM",
    status: str = "ok",
    fused: float = 1e-3,
    unfused: float = 2e-3,
    flops: float = 1e9,
    dram_bytes: float = 1e6,
    level: int | None = 1,
    **extra,
) -> Row:
    ok = status == "ok"
    bounds = {
        "fused": {"seconds": fused, "bottleneck": "compute"},
        "unfused": {"seconds": unfused, "bottleneck": "memory"},
    }
    bounds.update(extra.pop("more_bounds", {}))
    return Row(
        problem=problem,
        level=level,
        arch=arch,
        status=status,
        seconds=0.5,
        totals={"flops": flops, "dram_bytes": dram_bytes} if ok else None,
        bounds=bounds if ok else None,
        **extra,
    )
