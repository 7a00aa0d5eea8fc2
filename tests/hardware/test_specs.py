"""Spec files load, carry sources and the known numbers; malformed files fail in one line."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from solar.errors import SpecError
from solar.hardware import SPEC_DIR, HardwareSpec, Sourced, get_spec, list_specs, load_spec_file

REQUIRED = {"L4", "A100-SXM4-80GB", "A100-PCIe-40GB", "H100-SXM", "H100-PCIe", "H200-SXM", "B200"}
SPEC_FILES = sorted(SPEC_DIR.glob("*.yaml"))


def _sourced(node: object, path: str = ""):
    """Every Sourced number in a spec, with its key path."""
    if isinstance(node, Sourced):
        yield path, node
    elif isinstance(node, BaseModel):
        for field in type(node).model_fields:
            yield from _sourced(getattr(node, field), f"{path}.{field}" if path else field)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _sourced(value, f"{path}.{key}")


# -- the shipped files ----------------------------------------------------------------------------


def test_exactly_the_required_gpus():
    assert {p.stem for p in SPEC_FILES} == REQUIRED
    assert [s.name for s in list_specs()] == sorted(REQUIRED)


@pytest.mark.parametrize("path", SPEC_FILES, ids=lambda p: p.stem)
def test_file_loads_and_every_number_has_a_source(path: Path):
    spec = load_spec_file(path)
    assert spec.name == path.stem
    numbers = list(_sourced(spec))
    assert len(numbers) >= 15
    for where, number in numbers:
        assert number.value > 0, where
        assert number.source.strip(), where
    assert spec.calibrated == {}


KNOWN = [  # (gpu, accessor, exact value)
    ("H100-SXM", lambda s: s.tensor_rate("fp16"), 132 * 4096 * 1980e6),
    ("H100-SXM", lambda s: s.tensor_rate("bf16"), 132 * 4096 * 1980e6),
    ("H100-SXM", lambda s: s.simt_rate("fp32"), 66.9e12),
    ("H100-SXM", lambda s: s.dram_bytes_per_s, 3.35e12),
    ("H100-PCIe", lambda s: s.tensor_rate("fp16"), 114 * 4096 * 1755e6),
    ("H200-SXM", lambda s: s.dram_bytes_per_s, 4.8e12),
    ("H200-SXM", lambda s: s.l2_bytes, 62914560),
    ("H200-SXM", lambda s: s.sm_count.value, 132),
    ("L4", lambda s: s.dram_bytes_per_s, 300e9),
    ("L4", lambda s: s.tensor_rate("fp16"), 58 * 1024 * 2040e6),
    ("A100-SXM4-80GB", lambda s: s.dram_bytes_per_s, 2.039e12),
    ("A100-PCIe-40GB", lambda s: s.dram_bytes_per_s, 1.555e12),
    ("A100-SXM4-80GB", lambda s: s.tensor_rate("fp16"), 312e12),
    ("B200", lambda s: s.tensor_rate("fp16"), 148 * 8192 * 1980e6),
    ("B200", lambda s: s.tensor_rate("fp4"), 4 * 148 * 8192 * 1980e6),
    ("B200", lambda s: s.dram_bytes_per_s, 8e12),
    ("B200", lambda s: s.sm_count.value, 148),
]


@pytest.mark.parametrize(
    ("gpu", "read", "expected"), KNOWN, ids=[f"{k[0]}-{i}" for i, k in enumerate(KNOWN)]
)
def test_known_values(gpu, read, expected):
    assert math.isclose(read(get_spec(gpu)), expected, rel_tol=1e-6)


def test_tensor_paths_only_where_they_exist():
    assert get_spec("L4").tensor_rate("fp64") is None
    for gpu in ("A100-SXM4-80GB", "A100-PCIe-40GB"):
        assert get_spec(gpu).tensor_rate("fp8") is None
        assert "fp8" not in get_spec(gpu).tensor_core_flops_per_s
    for gpu in ("H100-SXM", "H100-PCIe", "H200-SXM", "B200"):
        assert get_spec(gpu).tensor_rate("int4") is None
    assert [s.name for s in list_specs() if s.tensor_rate("fp4") is not None] == ["B200"]
    assert get_spec("H100-SXM").tensor_rate("fp32") is None  # no such key: no tensor path


# Dense fp16 tensor flops per SM per clock: Ada 1024, Ampere 2048, Hopper 4096, Blackwell 8192.
# Every spec states its tensor peaks at the boost clock (vendors quote Hopper and Blackwell peaks at a
# lower tensor clock; a lower bound must assume the faster one), so the rate is never below nominal.
DENSE_FP16_PER_SM_CLK = {"Ada": 1024, "Ampere": 2048, "Hopper": 4096, "Blackwell": 8192}


@pytest.mark.parametrize("spec", list_specs(), ids=lambda s: s.name)
def test_tensor_peaks_are_dense_not_sparse(spec: HardwareSpec):
    per_sm_clk = spec.tensor_rate("fp16") / (spec.sm_count.value * spec.sm_clock_hz)
    assert 1000 <= per_sm_clk <= 8192
    nominal = DENSE_FP16_PER_SM_CLK[spec.architecture]
    assert nominal * (1 - 1e-9) <= per_sm_clk <= 1.01 * nominal  # a sparse figure would be 2x


@pytest.mark.parametrize("spec", list_specs(), ids=lambda s: s.name)
def test_derived_quantities(spec: HardwareSpec):
    tmem = spec.tensor_memory_per_sm
    per_sm = (
        spec.l1_shared_per_sm.capacity_bytes.value
        + spec.registers_per_sm.capacity_bytes.value
        + (0 if tmem is None else tmem.capacity_bytes.value)
        + spec.other_storage_per_sm.capacity_bytes.value
    )
    assert spec.sm_storage_bytes == per_sm
    assert spec.onchip_bytes == spec.l2_bytes + spec.sm_count.value * per_sm
    # the whole unified L1/shared SRAM counts, not only its largest shared-memory carve-out
    assert (
        spec.shared_memory_per_sm.capacity_bytes.value < spec.l1_shared_per_sm.capacity_bytes.value
    )
    assert spec.onchip_bytes == int(spec.onchip_bytes)  # whole bytes: exact integer bounds
    assert spec.sm_clock_hz == spec.boost_clock_mhz.value * 1e6
    sfu = 16 * spec.sm_count.value * spec.sm_clock_hz
    assert math.isclose(spec.sfu_ops_per_s.value, sfu, rel_tol=1e-9)
    assert spec.min_kernel_seconds.value <= 1.12e-6  # below the H200 measurement: a lower bound


# Unified L1/shared per SM (KiB) by architecture; tensor memory (TMEM) only on Blackwell.
L1_SHARED_KIB = {"Ada": 128, "Ampere": 192, "Hopper": 256, "Blackwell": 256}


@pytest.mark.parametrize("spec", list_specs(), ids=lambda s: s.name)
def test_on_chip_storage_levels(spec: HardwareSpec):
    assert spec.l1_shared_per_sm.capacity_bytes.value == L1_SHARED_KIB[spec.architecture] * 1024
    assert spec.registers_per_sm.capacity_bytes.value == 65536 * 4
    # uniform/predicate registers and the constant-cache working set: an allowance of 32 KiB
    assert spec.other_storage_per_sm.capacity_bytes.value == 32 * 1024
    has_tmem = spec.tensor_memory_per_sm is not None
    assert has_tmem == (spec.architecture == "Blackwell")
    if has_tmem:
        assert spec.tensor_memory_per_sm.capacity_bytes.value == 128 * 512 * 4


@pytest.mark.parametrize("spec", list_specs(), ids=lambda s: s.name)
def test_shared_memory_bandwidth_is_128_bytes_per_clock(spec: HardwareSpec):
    bw = spec.l1_shared_per_sm.bandwidth_bytes_per_s
    assert bw is not None and math.isclose(bw.value, 128 * spec.sm_clock_hz, rel_tol=1e-9)
    assert spec.l2.bandwidth_bytes_per_s is None  # NVIDIA publishes no L2 bandwidth


# The dense tensor-core paths of each GPU, per operand dtype (datasheets / whitepapers).
TENSOR_KEYS = {
    "L4": {"tf32", "fp16", "bf16", "fp8", "int8", "int4"},
    "A100-SXM4-80GB": {"fp64", "tf32", "fp16", "bf16", "int8", "int4"},
    "A100-PCIe-40GB": {"fp64", "tf32", "fp16", "bf16", "int8", "int4"},
    "H100-SXM": {"fp64", "tf32", "fp16", "bf16", "fp8", "int8"},
    "H100-PCIe": {"fp64", "tf32", "fp16", "bf16", "fp8", "int8"},
    "H200-SXM": {"fp64", "tf32", "fp16", "bf16", "fp8", "int8"},
    "B200": {"fp64", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"},
}


@pytest.mark.parametrize("gpu", sorted(TENSOR_KEYS))
def test_every_tensor_path_of_each_gpu_has_a_peak(gpu):
    assert set(get_spec(gpu).tensor_core_flops_per_s) == TENSOR_KEYS[gpu]


ONCHIP = [  # L2 + SMs x (L1/shared + registers [+ TMEM] + 32 KiB allowance), exact bytes
    ("H200-SXM", 62914560 + 132 * (262144 + 262144 + 32768)),
    ("H100-SXM", 52428800 + 132 * (262144 + 262144 + 32768)),
    ("L4", 50331648 + 58 * (131072 + 262144 + 32768)),
    ("A100-SXM4-80GB", 41943040 + 108 * (196608 + 262144 + 32768)),
    ("B200", 132644864 + 148 * (262144 + 262144 + 262144 + 32768)),
]


@pytest.mark.parametrize(("gpu", "expected"), ONCHIP, ids=[g for g, _ in ONCHIP])
def test_onchip_bytes(gpu, expected):
    assert get_spec(gpu).onchip_bytes == expected


def test_carveout_larger_than_the_unified_sram_is_refused(tmp_path):
    data = _good()
    data["shared_memory_per_sm"]["capacity_bytes"]["value"] = 300000
    _fails(_write(tmp_path, data), "shared_memory_per_sm", "exceeds l1_shared_per_sm")


# -- lookup ---------------------------------------------------------------------------------------


def test_lookup_by_name_alias_and_path():
    assert get_spec("h200-sxm").name == "H200-SXM"
    assert get_spec("H200").name == "H200-SXM"
    assert get_spec("nvidia h100 80gb hbm3").name == "H100-SXM"
    assert get_spec(str(SPEC_DIR / "L4.yaml")).name == "L4"
    assert get_spec("B200") is get_spec("b200")


AMBIGUOUS = [("h100", ("H100-PCIe", "H100-SXM")), ("A100", ("A100-PCIe-40GB", "A100-SXM4-80GB"))]


@pytest.mark.parametrize(("alias", "candidates"), AMBIGUOUS)
def test_ambiguous_alias_lists_candidates(alias, candidates):
    with pytest.raises(SpecError, match="ambiguous") as info:
        get_spec(alias)
    for name in candidates:
        assert name in str(info.value)


def test_unknown_name_lists_known():
    pattern = r"unknown GPU 'V100'; known: .*\(or pass a path to a spec YAML\)"
    with pytest.raises(SpecError, match=pattern) as info:
        get_spec("V100")
    for name in REQUIRED:
        assert name in str(info.value)


def test_alias_is_never_another_specs_name():
    names = {s.name.casefold() for s in list_specs()}
    for spec in list_specs():
        assert not names & {a.casefold() for a in spec.aliases}, spec.name


# -- malformed files ------------------------------------------------------------------------------


def _write(tmp_path: Path, data: dict | str, name: str = "H100-SXM") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def _good() -> dict:
    return yaml.safe_load((SPEC_DIR / "H100-SXM.yaml").read_text())


def _fails(path: Path, *fragments: str) -> str:
    with pytest.raises(SpecError) as info:
        load_spec_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert path.name in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_missing_key(tmp_path):
    data = _good()
    del data["dram"]["bandwidth_bytes_per_s"]["value"]
    _fails(_write(tmp_path, data), "dram.bandwidth_bytes_per_s.value: field required")


def test_missing_dram_bandwidth(tmp_path):
    data = _good()
    del data["dram"]["bandwidth_bytes_per_s"]
    _fails(_write(tmp_path, data), "dram.bandwidth_bytes_per_s: field required")


def test_unknown_key(tmp_path):
    data = _good()
    data["l2"]["latency_ns"] = {"value": 200, "source": "guess"}
    _fails(_write(tmp_path, data), "l2.latency_ns: unknown key")


def test_unknown_dtype_key(tmp_path):
    data = _good()
    data["tensor_core_flops_per_s"]["fp6"] = {"value": 1e15, "source": "x"}
    _fails(_write(tmp_path, data), "tensor_core_flops_per_s.fp6: unknown key")


def test_negative_value(tmp_path):
    data = _good()
    data["sm_count"]["value"] = -132
    _fails(_write(tmp_path, data), "sm_count.value: must be > 0")


def test_empty_source(tmp_path):
    data = _good()
    data["simt_flops_per_s"]["fp32"]["source"] = "  "
    _fails(_write(tmp_path, data), "simt_flops_per_s.fp32.source")


def test_wrong_type(tmp_path):
    data = _good()
    data["boost_clock_mhz"]["value"] = "fast"
    _fails(_write(tmp_path, data), "boost_clock_mhz.value")


def test_first_error_and_count(tmp_path):
    data = _good()
    del data["sm_count"]
    data["l2"]["capacity_bytes"]["value"] = 0
    _fails(_write(tmp_path, data), "sm_count: field required", "(and 1 more)")


def test_yaml_syntax_error(tmp_path):
    text = (SPEC_DIR / "H100-SXM.yaml").read_text().replace("sm_count:\n", "sm_count: [\n", 1)
    message = _fails(_write(tmp_path, text), "YAML syntax error")
    assert re.search(r"H100-SXM\.yaml:\d+:\d+: YAML syntax error", message)  # file:line:column


def test_name_must_match_file(tmp_path):
    _fails(_write(tmp_path, _good(), name="H100-other"), "name: 'H100-SXM'")


def test_top_level_not_a_mapping(tmp_path):
    _fails(_write(tmp_path, "- just\n- a list\n"), "<top level>")


def test_missing_file(tmp_path):
    _fails(tmp_path / "nope.yaml", "no such file")


def test_get_spec_with_a_bad_path(tmp_path):
    path = _write(tmp_path, {"name": "H100-SXM"})
    with pytest.raises(SpecError, match=r"H100-SXM\.yaml: .*field required \(and \d+ more\)"):
        get_spec(str(path))


@pytest.mark.parametrize(
    "place, digits, message",
    [
        (("sm_count",), 5000, "sm_count.value: a number of 5000 digits (at most 40)"),
        (("dram", "bandwidth_bytes_per_s"), 41, "dram.bandwidth_bytes_per_s.value: a number of 41 digits (at most 40)"),
        (("tensor_core_flops_per_s", "bf16"), 400, "tensor_core_flops_per_s.bf16.value: a number of 400 digits"),
    ],
)
def test_a_number_of_too_many_digits_names_its_key(tmp_path, place, digits, message):
    data = _good()
    target = data
    for key in place:
        target = target[key]
    target["value"] = 424242  # a marker replaced by the long number in the text
    text = yaml.safe_dump(data, sort_keys=False).replace("424242", "7" * digits)
    _fails(_write(tmp_path, text), message)


def test_forty_digits_reach_the_physical_range_check(tmp_path):
    data = _good()
    data["sm_count"]["value"] = 424242
    text = yaml.safe_dump(data, sort_keys=False).replace("424242", "7" * 40)
    _fails(_write(tmp_path, text), "sm_count.value: 7.77778e+39 is outside the physical range")
