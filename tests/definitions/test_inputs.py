"""What `solar definitions` does with inputs that are code or lead elsewhere: the reference runs in
the analysis worker (never in this process), names that would leave OUT/problems/ and non-finite
scalars are one line, and a definition shipped in two folders (SOL-ExecBench's examples/) is read
once while two different definitions with one name are refused with both paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from solar.cli import main
from solar.definitions.schema import DefinitionError
from solar.definitions.suite import cases, copies_note, find_definitions, write_problems

BASE = {
    "name": "scale_h64", "op_type": "elementwise",
    "axes": {"T": {"type": "var"}, "H": {"type": "const", "value": 64}},
    "inputs": {"x": {"shape": ["T", "H"], "dtype": "float16"}, "alpha": {"shape": None, "dtype": "float32"}},
    "outputs": {"z": {"shape": ["T", "H"], "dtype": "float16"}},
    "reference": "import torch\n\ndef run(x, alpha):\n    return x * alpha\n",
}
WORKLOAD = {"uuid": "w1", "axes": {"T": 8}, "inputs": {"alpha": {"type": "scalar", "value": 0.5}}}


def _write(folder: Path, definition: dict, workloads: list[dict] = (WORKLOAD,)) -> Path:
    folder.mkdir(parents=True)
    (folder / "definition.json").write_text(json.dumps(definition))
    (folder / "workload.jsonl").write_text("".join(json.dumps(w) + "\n" for w in workloads))
    return folder


def _marking(marker: Path) -> dict:
    """BASE whose reference, when it runs, appends the pid of the process running it to `marker`."""
    code = f"import os\nimport torch\nopen({str(marker)!r}, 'a').write(f'{{os.getpid()}}\\n')\n\n\ndef run(x, alpha):\n    return x * alpha\n"
    return {**BASE, "reference": code}


def test_the_reference_runs_in_the_worker_and_a_copy_in_another_folder_is_read_once(tmp_path, capsys):
    marker = tmp_path / "ran.txt"
    root = tmp_path / "examples"
    first = _write(root / "cute_dsl" / "scale", _marking(marker))
    copy = _write(root / "cutile" / "scale", _marking(marker))
    entries = find_definitions(root)
    write_problems(cases(entries), tmp_path / "read")
    assert not marker.exists()  # reading the folder and writing the problem files runs nothing
    out = tmp_path / "out"
    assert main(["definitions", str(root), "--arch", "B200", "--out", str(out), "--jobs", "1"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert (
        f"note: definition 'scale_h64' in {first / 'definition.json'} is also in {copy / 'definition.json'} "
        "(same definition and workloads): read once"
    ) in err
    assert "bounded 1 workloads of 1 definitions" in err
    pids = {int(p) for p in marker.read_text().split()}
    assert pids and os.getpid() not in pids  # the worker ran it, this process never did


def test_one_name_with_two_different_definitions_is_refused_with_both_paths(tmp_path, capsys):
    root = tmp_path / "examples"
    first = _write(root / "a" / "scale", BASE)
    other = _write(root / "b" / "scale", {**BASE, "axes": {**BASE["axes"], "H": {"type": "const", "value": 128}}})
    assert main(["definitions", str(root), "--arch", "B200", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"solar: error: {other / 'definition.json'}: definition 'scale_h64' is also in {first / 'definition.json'}, "
        "with other definitions; give one of them another name or pass --definitions to pick\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("workloads", "what"),
    [
        ([WORKLOAD, {**WORKLOAD, "uuid": "w2"}], "workloads"),
        ([{**WORKLOAD, "axes": {"T": 16}}], "workloads"),
    ],
)
def test_one_definition_with_other_workloads_is_refused(tmp_path, workloads, what):
    root = tmp_path / "examples"
    _write(root / "a" / "scale", BASE)
    _write(root / "b" / "scale", BASE, workloads)
    with pytest.raises(DefinitionError, match=rf"b/scale/definition\.json: definition 'scale_h64' is also in .*a/scale/definition\.json, with other {what};"):
        find_definitions(root)


def test_identical_copies_are_kept_as_copies_and_said_once(tmp_path):
    root = tmp_path / "examples"
    for lang in ("cuda_cpp", "triton", "pytorch"):
        _write(root / lang / "scale", BASE)
    [entry] = find_definitions(root)
    assert [p.parent.parent.name for p in entry.copies] == ["pytorch", "triton"]
    assert copies_note(entry).count("definition.json") == 3
    assert copies_note(find_definitions(root / "cuda_cpp" / "scale")[0]) is None


@pytest.mark.parametrize(
    ("definition", "workload", "message"),
    [
        ({**BASE, "name": ".."}, WORKLOAD, r"definition name '\.\.' cannot name a file under OUT/problems/"),
        ({**BASE, "name": "."}, WORKLOAD, r"definition name '\.' cannot name a file under OUT/problems/"),
        ({**BASE, "name": ""}, WORKLOAD, r"definition name '' cannot name a file"),
        ({**BASE, "name": "../../etc/x"}, WORKLOAD, r"definition name '\.\./\.\./etc/x' cannot name a file"),
        (BASE, {**WORKLOAD, "uuid": ".."}, r"workload uuid '\.\.' cannot name a file under OUT/problems/"),
    ],
)
def test_names_that_would_leave_the_problems_folder_are_refused(tmp_path, definition, workload, message):
    root = _write(tmp_path / "d", definition, [workload])
    with pytest.raises(DefinitionError, match=message):
        cases(find_definitions(root))


def test_other_characters_become_underscores_and_stay_inside(tmp_path):
    root = _write(tmp_path / "d", {**BASE, "name": "a/../../etc"}, [{**WORKLOAD, "uuid": "b/../c"}])
    [case] = cases(find_definitions(root))
    assert case.rel == "a_.._.._etc/b_.._c.py"
    [problem] = write_problems([case], tmp_path / "out")
    assert (tmp_path / "out" / "problems") in problem.path.resolve().parents


def test_a_problems_folder_linked_elsewhere_is_refused(tmp_path):
    root = _write(tmp_path / "d", BASE)
    out = tmp_path / "out"
    (out / "problems").mkdir(parents=True)
    (out / "problems" / "scale_h64").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(DefinitionError, match=r"scale_h64/w1\.py: leads outside .*problems; remove what is there"):
        write_problems(cases(find_definitions(root)), out)
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize(("value", "shown"), [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf")])
def test_a_non_finite_scalar_names_the_workload_and_the_field(tmp_path, value, shown):
    root = tmp_path / "d"
    _write(root, BASE)
    (root / "workload.jsonl").write_text(
        '{"uuid": "w1", "axes": {"T": 8}, "inputs": {"alpha": {"type": "scalar", "value": 1}}}\n'
        f'{{"uuid": "w2", "axes": {{"T": 8}}, "inputs": {{"alpha": {{"type": "scalar", "value": {value}}}}}}}\n'
    )
    with pytest.raises(DefinitionError, match=rf"workload\.jsonl:2: workload 'w2': inputs\.alpha\.value is {shown}; a scalar must be a finite number$"):
        find_definitions(root)
