"""The use-case plots are written and hold what they draw (a roofline per GPU, the provisioning plane)."""

from __future__ import annotations

import pytest

from solar.api import load
from solar.cli import main
from solar.usecases.compare import compare
from solar.usecases.plots import provision_plane, roofline
from solar.usecases.provision import provision_loaded
from tests.backends.test_cache_aware import softmax

ARCHS = ["L4", "A100-SXM4-80GB", "H100-SXM"]


@pytest.mark.parametrize("suffix", [".png"])
def test_roofline_file(tmp_path, suffix: str) -> None:
    out = tmp_path / f"roof{suffix}"
    roofline(compare(softmax(64, 4096), arch=ARCHS), str(out))
    data = out.read_bytes()
    assert len(data) > 10_000
    if suffix == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        text = data.decode()
        assert text.lstrip().startswith("<?xml") and all(a in text for a in ARCHS)


def test_provision_plane_and_cli_plots(tmp_path) -> None:
    out = tmp_path / "plane.png"
    p = provision_loaded(load(softmax(64, 4096)), 5e-5, "H100-SXM")
    provision_plane(p, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    f = tmp_path / "p.ir"
    f.write_text(str(softmax(64, 4096)))
    svg = tmp_path / "roof.svg"
    assert main(["analyze", str(f), "--arch", "L4", "H100-SXM", "--json", "--plot", str(svg)]) == 0
    assert "H100-SXM" in svg.read_text()
