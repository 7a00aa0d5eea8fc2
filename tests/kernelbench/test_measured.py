"""Loading measured times: `solar validate --json` records in their accepted shapes, and KernelBench
baseline timing files (milliseconds)."""

from __future__ import annotations

import json

import pytest

from solar.errors import SpecError
from solar.kernelbench.measured import MeasuredFileError, load_measured


def _write(tmp_path, name, data, jsonl=False):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(d) for d in data) if jsonl else json.dumps(data))
    return path


VALIDATE = [
    {
        "problem": "level1/1_A.py",
        "arch": "H200",
        "measured": {
            "eager": {"median_seconds": 2e-3, "min_seconds": 1.9e-3},
            "compile": {"median_seconds": 1e-3},
        },
    },
    {
        "problem": "2_B.py",
        "gpu": {"name": "NVIDIA H100 80GB HBM3"},
        "measured": {"eager": {"median_ms": 4.0}},
    },
    {
        "problem": "3_C.py",
        "arch": "H200-SXM",
        "status": "error",
        "error": "no CUDA\ndevice",
        "measured": None,
    },
]


@pytest.mark.parametrize("shape", ["list", "jsonl", "wrapped"])
def test_validate_records_in_every_container_shape(tmp_path, shape):
    data = {"results": VALIDATE} if shape == "wrapped" else VALIDATE
    loaded = load_measured(str(_write(tmp_path, "v.json", data, jsonl=shape == "jsonl")))
    assert loaded.format == "solar-validate"
    got = sorted(
        (m.problem, m.arch, m.variant, m.seconds, m.min_seconds) for m in loaded.measurements
    )
    assert got == [
        ("2_B.py", "H100-SXM", "eager", pytest.approx(4e-3), None),
        ("level1/1_A.py", "H200-SXM", "compile", 1e-3, None),
        ("level1/1_A.py", "H200-SXM", "eager", 2e-3, 1.9e-3),
    ]
    assert (
        len(loaded.skipped) == 1
        and "3_C.py" in loaded.skipped[0]
        and "no CUDA device" in loaded.skipped[0]
    )


def test_a_single_flat_record_and_overrides(tmp_path):
    path = _write(
        tmp_path, "one.json", {"file": "x/level2/5_E.py", "median_us": 250, "variant": "compile"}
    )
    loaded = load_measured(str(path))
    (m,) = loaded.measurements
    assert (m.problem, m.arch, m.variant, m.seconds) == (
        "x/level2/5_E.py",
        None,
        "compile",
        pytest.approx(2.5e-4),
    )
    (m,) = load_measured(f"eager={path}", arch="L4").measurements
    assert (m.variant, m.arch) == ("eager", "L4")


KERNELBENCH = {
    "level1": {
        "1_Square_matrix_multiplication_.py": {
            "mean": 3.5,
            "std": 0.01,
            "min": 3.4,
            "max": 3.6,
            "hardware": "NVIDIA H200",
        },
        "2_Bad.py": {"std": 1.0},
    },
    "level2": {"7_Other.py": {"mean": 0.25, "hardware": "Some Unknown GPU"}},
}


def test_kernelbench_baseline_is_milliseconds_keyed_by_level(tmp_path):
    loaded = load_measured(str(_write(tmp_path, "baseline_time_torch.json", KERNELBENCH)))
    assert loaded.format == "kernelbench-baseline"
    got = {
        m.problem: (m.arch, m.variant, m.seconds, m.fastest_seconds) for m in loaded.measurements
    }
    assert got == {
        "level1/1_Square_matrix_multiplication_.py": (
            "H200-SXM",
            "eager",
            pytest.approx(3.5e-3),
            pytest.approx(3.4e-3),
        ),
        "level2/7_Other.py": (
            "Some Unknown GPU",
            "eager",
            pytest.approx(2.5e-4),
            pytest.approx(2.5e-4),
        ),
    }
    assert loaded.skipped == ("level1/2_Bad.py: no positive `mean`",)


def test_kernelbench_compile_files_and_arch_override(tmp_path):
    path = _write(tmp_path, "baseline_time_torch_compile_inductor_default.json", KERNELBENCH)
    assert {m.variant for m in load_measured(str(path)).measurements} == {
        "compile_inductor_default"
    }
    assert {m.arch for m in load_measured(str(path), arch="H100-SXM5").measurements} == {"H100-SXM"}
    with pytest.raises(SpecError, match="ambiguous"):
        load_measured(str(path), arch="H100")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{not json\n", r"m\.json:1:2: not JSON"),
        ('{"a": 1}', "not a `solar validate --json` output"),
    ],
)
def test_unreadable_files_are_one_line_errors(tmp_path, text, match):
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(MeasuredFileError, match=match):
        load_measured(str(path))
    with pytest.raises(MeasuredFileError, match="cannot read"):
        load_measured(str(tmp_path / "missing.json"))
