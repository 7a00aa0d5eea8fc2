"""Fast failure: every argument error, and `validate` / `calibrate` on a machine without an NVIDIA
driver, is one stderr line and exit 2 before torch or jax is imported (the checks run in argparse
types or in a command's `check` hook, before the entry preloads the program's framework)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from solar.errors import SolarError
from solar.validate import device

ROOT = Path(__file__).resolve().parents[2]

#: (command line, a piece of its one error line); {tmp} is an empty folder.
ERRORS = [
    ("frobnicate", "invalid choice: 'frobnicate'"),
    ("analyze examples/matmul.py --bogus", "unrecognized arguments: --bogus"),
    ("analyze examples/matmul.py --precision nope", "argument --precision: invalid choice: 'nope'"),
    ("analyze examples/matmul.py --arch V100", "unknown GPU 'V100'"),
    ("analyze examples/matmul.py --clock-mhz -1", "argument --clock-mhz"),
    ("analyze {tmp}/missing.py", "missing.py: no such file"),
    ("analyze hf:x --seq 0", "argument --seq: '0': must be an integer in 1.."),
    ("analyze examples/matmul.py --seq 8", "--scenario, --batch, --seq and --context apply to hf:"),
    ("analyze hf:x --train", "hf: models are analysed for inference; drop --train"),
    ("analyze examples/matmul.py --frontend llm", "--frontend llm needs an endpoint"),
    ("analyze examples/matmul.py --frontend jax", "examples/matmul.py is a PyTorch program; use --frontend torch"),
    ("analyze examples/jax/flax_mlp.py --frontend torch", "flax_mlp.py is a JAX program"),
    ("analyze examples/jax/flax_mlp.py --mode eval", "--mode and --infer-structure apply to PyTorch model files, not to JAX"),
    ("analyze examples/matmul.py --llm-base-url http://localhost:8000/v1", "needs both an endpoint and a model"),
    ("analyze examples/matmul.py --measured-ops {tmp}/missing.json", "missing.json: no such file; pass the path of a per-op"),
    ("analyze examples/matmul.py --train --loss bogus", "unknown loss 'bogus'; use sum, mean or FILE:function"),
    ("analyze examples/jax/flax_mlp.py --train --loss nope", "unknown loss 'nope'"),
    ("analyze examples/matmul.py --max-memory 8", "argument --max-memory: '8' is not a size; give one with a unit"),
    ("verify {tmp}/missing.py", "missing.py: no such file"),
    ("verify examples/mlp.py --seed -1", "argument --seed"),
    ("ir", "the following arguments are required: file"),
    ("ir {tmp}/missing.py", "missing.py: no such file"),
    ("ir examples/matmul.py --frontend jax", "is a PyTorch program"),
    ("einsum {tmp}/missing.py", "missing.py: no such file"),
    ("einsum examples/jax/flax_mlp.py --mode eval", "not to JAX files"),
    ("validate examples/mlp.py --arch V100", "unknown GPU 'V100'"),
    ("validate {tmp}/missing.py", "missing.py: no such file"),
    ("validate examples/mlp.py --reps 0", "argument --reps"),
    ("validate examples/mlp.py --train --loss bogus", "unknown loss 'bogus'"),
    ("calibrate --arch V100", "unknown GPU 'V100'"),
    ("calibrate --out {tmp}/no/such/x.yaml", "argument --out"),
    ("kernelbench benchmarks/suite --arch H100-SXM --out {tmp}/kb --jobs 0", "--jobs"),
    ("kernelbench benchmarks/suite --arch V100 --out {tmp}/kb", "unknown GPU 'V100'"),
    ("kernelbench {tmp}/missing --arch H100-SXM --out {tmp}/kb", "missing"),
    ("kernelbench benchmarks/suite --arch H100-SXM --out {tmp}/kb --precision nope", "invalid choice: 'nope'"),
    ("definitions benchmarks/definitions --arch V100 --out {tmp}/defs", "unknown GPU 'V100'"),
    ("definitions benchmarks/definitions", "the following arguments are required: --out"),
    ("definitions benchmarks/definitions --out {tmp}/defs --suspicious-ratio 0.5", "--suspicious-ratio must be at least 1"),
    ("compare examples/matmul.py --clock-mhz -1", "argument --clock-mhz"),
    ("compare examples/matmul.py --arch L4 V100", "unknown GPU 'V100'"),
    ("compare examples/jax/flax_mlp.py --mode eval", "not to JAX files"),
    ("provision examples/matmul.py --target-ms 1 --train --loss bogus", "unknown loss 'bogus'"),
    ("provision examples/matmul.py --target-ms 0", "argument --target-ms"),
    ("provision examples/matmul.py --target-ms 1 --like V100", "unknown GPU 'V100'"),
    ("llm-cache bogus", "invalid choice: 'bogus'"),
    ("analyze examples/matmul.py --llm-timeout -1", "--llm-timeout -1.0: a request deadline is seconds > 0"),
    ("analyze examples/matmul.py --llm-timeout nan", "--llm-timeout nan: a request deadline is seconds > 0"),
    ("analyze examples/matmul.py --llm-cache /proc/solar-llm-cache", "--llm-cache /proc/solar-llm-cache: cannot write there"),
    ("analyze examples/matmul.py --plot /proc/x.svg", "--plot /proc/x.svg: cannot write there"),
    ("analyze examples/matmul.py --symbolic M=M --plot {tmp}/x.svg", "--plot draws the numeric bounds"),
    ("analyze examples/matmul.py --optimizer adamw", "--optimizer applies to a training step; add --train"),
    ("analyze examples/matmul.py --loss mean", "--loss applies to a training step; add --train"),
    ("compare examples/matmul.py --loss mean", "--loss applies to a training step"),
    ("kernelbench tests/badinput/cli/kernelbench_out_unwritable.files --arch H100-SXM --out /proc/x", "--out /proc/x: cannot write there"),
    ("ops --bogus", "unrecognized arguments: --bogus"),
]

#: what `validate` and `calibrate` say without CUDA (where this machine has no NVIDIA driver).
WITHOUT_CUDA = ["validate examples/mlp.py", "validate examples/mlp.py --train", "calibrate", "calibrate --dispatch-only"]

CHILD = (
    "import sys\n"
    "from solar.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "print(rc, 'torch' in sys.modules, 'jax' in sys.modules)\n"
)


def _run(line: str, tmp: Path) -> subprocess.CompletedProcess:
    argv = line.format(tmp=tmp).split()
    return subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, cwd=ROOT, check=False)


@pytest.mark.parametrize("line,piece", ERRORS, ids=[line for line, _ in ERRORS])
def test_an_argument_error_is_one_line_before_torch_or_jax(line, piece, tmp_path):
    out = _run(line, tmp_path)
    assert out.stdout.split() == ["2", "False", "False"], out.stderr
    (error,) = out.stderr.strip().splitlines()
    assert error.startswith("solar: error: ") and piece in error


@pytest.mark.skipif(not device.no_cuda_driver(), reason="this machine has an NVIDIA driver")
@pytest.mark.parametrize("line", WITHOUT_CUDA)
def test_without_an_nvidia_driver_validate_says_so_before_torch(line, tmp_path):
    out = _run(line, tmp_path)
    assert out.stdout.split() == ["2", "False", "False"], out.stderr
    assert out.stderr.strip() == f"solar: error: {device.NO_CUDA}"


def test_the_driver_probe_decides_only_when_nothing_is_there(monkeypatch, tmp_path):
    monkeypatch.setattr(device, "NVIDIA_DRIVER", str(tmp_path / "version"))
    monkeypatch.setattr(device.ctypes.util, "find_library", lambda name: None)
    with pytest.raises(SolarError, match="no CUDA GPU here"):
        device.check_cuda_driver()
    monkeypatch.setattr(device.ctypes.util, "find_library", lambda name: "libcuda.so.1")
    device.check_cuda_driver()  # a driver library: torch decides (require_cuda)
    monkeypatch.setattr(device.ctypes.util, "find_library", lambda name: None)
    (tmp_path / "version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module\n")
    device.check_cuda_driver()  # a loaded kernel driver: torch decides
