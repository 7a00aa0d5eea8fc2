"""The package works installed from its wheel, not only from the source tree: the wheel holds the GPU
spec files (package data under solar/hardware/specs), and solar run from the unpacked wheel, outside
the source tree, finds every spec and bounds a program."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted(p.name for p in (ROOT / "hardware_specs").glob("*.yaml"))


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    """The wheel built from a copy of the sources (the tree itself gets no build/ folder), unpacked."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "hardware_specs", src / "hardware_specs")
    shutil.copytree(ROOT / "solar", src / "solar", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(work), str(src)],
        check=True, capture_output=True, text=True,
    )
    (wheel,) = work.glob("solar_sol-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        z.extractall(work / "site")
    assert {f"solar/hardware/specs/{n}" for n in SPECS} <= names
    assert "solar/hardware/specs/calibrated/H200-SXM.yaml" in names
    return work / "site"


def _solar(site: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "import sys, solar.cli; sys.exit(solar.cli.main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=site.parent, env=env
    )


def test_the_wheel_lists_every_spec(unpacked):
    out = _solar(unpacked, "specs")
    assert out.returncode == 0, out.stderr
    for name in SPECS:
        assert name.removesuffix(".yaml") in out.stdout


def test_the_wheel_bounds_a_program_with_its_own_specs(unpacked, tmp_path):
    program = tmp_path / "matmul.py"
    shutil.copy(ROOT / "examples" / "matmul.py", program)
    code = (
        "import solar, solar.hardware.spec as s\n"
        "print(s.SPEC_DIR)\n"
        f"print(solar.analyze({str(program)!r}, arch='H200-SXM').bounds['fused'].seconds > 0)\n"
        "print(s.calibrated_spec('H200-SXM') is not None)\n"
        "import solar.hardware.host as h\n"
        "print(','.join(x.name for x in h.list_hosts()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(unpacked)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    spec_dir, bounded, calibrated, hosts = out.stdout.split()
    assert Path(spec_dir).is_relative_to(unpacked)
    assert bounded == "True" and calibrated == "True"
    assert hosts == "default,h100-host,h200-host"  # the host profiles ship too
