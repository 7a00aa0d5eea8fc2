"""System specs load with a source for every number; bad files and node counts fail in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from solar.errors import SpecError
from solar.hardware.systems import SYSTEM_DIR, get_system, list_systems, load_system_file

SHIPPED = {"8xH100-SXM", "8xH200-SXM", "8xB200", "8xA100-SXM", "2xL4-PCIe"}
FILES = sorted(SYSTEM_DIR.glob("*.yaml"))


def test_the_shipped_systems():
    assert {s.name for s in list_systems()} == SHIPPED


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_number_has_a_source(path: Path):
    spec = load_system_file(path)
    facts = [spec.gpus_per_node]
    for fabric in (spec.scale_up, spec.scale_out):
        if fabric is not None:
            facts += [fabric.bandwidth_bytes_per_s_per_direction, fabric.latency_seconds, fabric.in_network_reduction]
    for fact in facts:
        assert fact.source.strip()
    assert spec.gpu_spec.name == spec.gpu


KNOWN = [  # (system, gpu, GPUs per node, scale-up B/s per direction, in-switch reduction, NIC B/s)
    ("8xH100-SXM", "H100-SXM", 8, 450e9, True, 50e9),
    ("8xH200-SXM", "H200-SXM", 8, 450e9, True, 50e9),
    ("8xB200", "B200", 8, 900e9, True, 50e9),
    ("8xA100-SXM", "A100-SXM4-80GB", 8, 300e9, False, 25e9),
    ("2xL4-PCIe", "L4", 2, 32e9, False, 25e9),
]


@pytest.mark.parametrize("name,gpu,per_node,up,nvls,nic", KNOWN)
def test_known_numbers(name, gpu, per_node, up, nvls, nic):
    s = get_system(name)
    assert (s.gpu, s.per_node, s.world) == (gpu, per_node, per_node)
    assert s.scale_up.bandwidth_bytes_per_s_per_direction.value == up
    assert s.scale_up.in_network_reduction.value is nvls
    assert (s.scale_out and s.scale_out.bandwidth_bytes_per_s_per_direction.value) == (nic or None)


def test_nodes_and_aliases():
    s = get_system("dgx-h100", nodes=4)
    assert (s.name, s.nodes, s.world, s.shown) == ("8xH100-SXM", 4, 32, "8xH100-SXM x4 nodes")


BAD_LOOKUPS = [  # (name, nodes, message)
    ("8xH100-SXM", 0, r"--nodes 0: must be 1\.\.100000"),
    ("8xV100", 1, r"unknown system '8xV100'; known: 2xL4-PCIe, 8xA100-SXM"),
]


@pytest.mark.parametrize("name,nodes,message", BAD_LOOKUPS)
def test_bad_lookups(name, nodes, message):
    with pytest.raises(SpecError, match=message) as info:
        get_system(name, nodes)
    assert "\n" not in str(info.value)


def _edit(tmp_path: Path, edit) -> Path:
    data = yaml.safe_load((SYSTEM_DIR / "8xH100-SXM.yaml").read_text())
    edit(data)
    path = tmp_path / "8xH100-SXM.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


BAD_FILES = [  # (edit, message)
    (lambda d: d["scale_up"].pop("latency_seconds"), r"scale_up\.latency_seconds: field required; add it"),
    (lambda d: d["scale_up"].update(kind="carrier-pigeon"), r"scale_up\.kind: .*nvswitch"),
    (
        lambda d: d["scale_up"]["bandwidth_bytes_per_s_per_direction"].update(value=3600.0),
        r"scale_up\.bandwidth_bytes_per_s_per_direction\.value: 3600 is outside the physical range",
    ),
    (lambda d: d["gpus_per_node"].update(value=2.5), r"gpus_per_node\.value: 2\.5 is not a whole number"),
    (lambda d: d["scale_up"]["in_network_reduction"].update(source=" "), r"in_network_reduction\.source"),
    (lambda d: d.update(gpu="V100"), r"gpu: unknown GPU 'V100'"),
    (lambda d: d.update(name="other"), r"name: 'other' differs from the file name"),
    (lambda d: d.update(colour="green"), r"colour: unknown key"),
]


@pytest.mark.parametrize("edit,message", BAD_FILES)
def test_bad_files(tmp_path, edit, message):
    with pytest.raises(SpecError, match=message) as info:
        load_system_file(_edit(tmp_path, edit))
    assert "\n" not in str(info.value)


def test_nodes_need_a_scale_out_fabric(tmp_path):
    path = _edit(tmp_path, lambda d: d.pop("scale_out"))
    assert load_system_file(path).scale_out is None
    with pytest.raises(SpecError, match=r"no scale_out fabric .* use --nodes 1"):
        get_system(str(path), 2)
