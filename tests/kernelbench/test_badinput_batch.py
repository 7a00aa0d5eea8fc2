"""Bad input to `solar kernelbench`, table-driven: every case gets its exit status and one line on
stderr matching its pattern, never a traceback. Bad flags are refused before anything starts (the
run itself is replaced by a function that fails the test); the `RUNS` cases do run, on odd files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import solar.kernelbench.cli as kernelbench_cli
from solar.kernelbench.cli import main
from solar.kernelbench.results import BAD_FILE, RESULTS_FILE, read_rows
from tests.kernelbench.helpers import RELU, write_suite


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]  # after ROOT; {placeholders} are paths made by `_paths`
    code: int
    pattern: str  # matched (re.search) against the one line on stderr
    root: str = "{root}"


def _paths(tmp: Path) -> dict[str, str]:
    root = write_suite(tmp / "suite", {"level1/1_ReLU.py": RELU, "level2/1_ReLU.py": RELU})
    (tmp / "file.txt").write_text("not a folder\n")
    (tmp / "folder").mkdir()
    (tmp / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (tmp / "bad.json").write_text('{"problem": "level1/1_ReLU.py", \n')
    (tmp / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp / "shape.json").write_text(json.dumps({"hello": 1}))
    (tmp / "norows").mkdir()
    (tmp / "norows" / "results.jsonl").mkdir(parents=True)
    (tmp / "nolevels").mkdir()
    (tmp / "nolevels" / "x.py").write_text(RELU)
    return {
        "root": str(root),
        "out": str(tmp / "out"),
        "file": str(tmp / "file.txt"),
        "under_file": str(tmp / "file.txt" / "out"),
        "folder": str(tmp / "folder"),
        "binary": str(tmp / "binary.bin"),
        "bad_json": str(tmp / "bad.json"),
        "nested": str(tmp / "nested.json"),
        "shape": str(tmp / "shape.json"),
        "missing": str(tmp / "missing.json"),
        "rows_dir": str(tmp / "norows"),
        "no_levels": str(tmp / "nolevels"),
    }


_ARCH = ("--arch", "H100-SXM")
_OUT = ("--out", "{out}")
_BASE = (*_ARCH, *_OUT)

# fmt: off
REFUSED = [
    # numbers
    Case("timeout-nan", (*_BASE, "--timeout", "nan"), 2, r"--timeout must be a number of seconds above 0"),
    Case("timeout-inf", (*_BASE, "--timeout", "inf"), 2, r"--timeout must be .* got inf"),
    Case("timeout-zero", (*_BASE, "--timeout", "0"), 2, r"--timeout must be .* got 0\.0"),
    Case("timeout-negative", (*_BASE, "--timeout", "-3"), 2, r"--timeout must be .* got -3\.0"),
    Case("timeout-huge", (*_BASE, "--timeout", "1e300"), 2, r"at most 604800 \(a week\)"),
    Case("timeout-word", (*_BASE, "--timeout", "soon"), 2, r"--timeout must be a number of seconds, got 'soon'"),
    Case("measure-timeout-nan", (*_BASE, "--measure-timeout", "nan"), 2, r"--measure-timeout must be"),
    Case("jobs-zero", (*_BASE, "--jobs", "0"), 2, r"--jobs must be a whole number of at least 1, got 0"),
    Case("jobs-negative", (*_BASE, "--jobs", "-2"), 2, r"--jobs must be .* got -2"),
    Case("jobs-fraction", (*_BASE, "--jobs", "1.5"), 2, r"--jobs must be .* got '1\.5'"),
    Case("level-word", (*_BASE, "--level", "one"), 2, r"--level takes level numbers .* got 'one'"),
    Case("level-negative", (*_BASE, "--level", "-1"), 2, r"--level takes level numbers"),
    Case("level-superscript", (*_BASE, "--level", "²"), 2, r"--level takes level numbers .* got '²'"),
    Case("jobs-superscript", (*_BASE, "--jobs", "²"), 2, r"--jobs must be .* got '²'"),
    Case("timeout-hex", (*_BASE, "--timeout", "0x10"), 2, r"--timeout must be a number of seconds, got '0x10'"),
    Case("clock-nan", (*_BASE, "--clock-mhz", "nan"), 2, r"--clock-mhz must be a clock in MHz"),
    Case("clock-inf", (*_BASE, "--clock-mhz", "inf"), 2, r"--clock-mhz must be .* got 'inf'"),
    Case("clock-huge", (*_BASE, "--clock-mhz", "1e30"), 2, r"--clock-mhz must be .* at most 10000"),
    Case("clock-zero", (*_BASE, "--clock-mhz", "0"), 2, r"--clock-mhz must be"),
    # GPUs
    Case("arch-unknown", ("--arch", "V100", *_OUT), 2, r"^unknown GPU 'V100'"),
    Case("arch-one-unknown", ("--arch", "H100-SXM", "Z9", *_OUT), 2, r"^unknown GPU 'Z9'"),
    Case("arch-empty", ("--arch", *_OUT), 2, r"argument --arch: expected at least one argument"),
    Case("measured-arch-unknown", (*_BASE, "--measured-arch", "V100"), 2, r"^unknown GPU 'V100'"),
    # analysis flags passed through, checked by `solar analyze`'s own parser
    Case("precision-bogus", (*_BASE, "--precision", "best"), 2, r"argument --precision: invalid choice: 'best'"),
    Case("cache-bogus", (*_BASE, "--cache", "lukewarm"), 2, r"argument --cache: invalid choice: 'lukewarm'"),
    Case("mode-bogus", (*_BASE, "--mode", "sideways"), 2, r"argument --mode: invalid choice: 'sideways'"),
    # kernelbench's own flags
    Case("isolation-bogus", (*_BASE, "--isolation", "vm"), 2, r"argument --isolation: invalid choice: 'vm'"),
    Case("unknown-flag", (*_BASE, "--fast"), 2, r"unrecognized arguments: --fast"),
    Case("no-out", _ARCH, 2, r"the following arguments are required: --out"),
    Case("no-arch", _OUT, 2, r"the following arguments are required: --arch"),
    # paths
    Case("out-is-a-file", (*_ARCH, "--out", "{file}"), 2, r"file\.txt: exists and is not a folder"),
    Case("out-under-a-file", (*_ARCH, "--out", "{under_file}"), 2, r"file\.txt is not a folder"),
    Case("results-is-a-folder", (*_ARCH, "--out", "{rows_dir}"), 2, r"results\.jsonl: not a readable and writable file"),
    Case("root-missing", _BASE, 2, r"nowhere: no such folder", root="{folder}/nowhere"),
    Case("root-is-a-file", _BASE, 2, r"file\.txt: is a file, not a folder", root="{file}"),
    Case("root-without-levels", _BASE, 2, r"no levelN folders in it", root="{no_levels}"),
    Case("root-empty-folder", _BASE, 2, r"no levelN folders in it", root="{folder}"),
    Case("level-absent", (*_BASE, "--level", "7"), 2, r"no problem files at level 7"),
    Case("problems-match-nothing", (*_BASE, "--problems", "*conv*"), 2, r"no problem files matching '\*conv\*'"),
    # measured files
    Case("measured-missing", (*_BASE, "--measured", "{missing}"), 2, r"missing\.json: cannot read measured file \(No such file"),
    Case("measured-folder", (*_BASE, "--measured", "{folder}"), 2, r"cannot read measured file \(Is a directory\)"),
    Case("measured-binary", (*_BASE, "--measured", "{binary}"), 2, r"not a measured file \(not UTF-8 text\)"),
    Case("measured-bad-json", (*_BASE, "--measured", "{bad_json}"), 2, r"bad\.json:1:\d+: not JSON"),
    Case("measured-nested", (*_BASE, "--measured", "{nested}"), 2, r"nested too deeply"),
    Case("measured-shape", (*_BASE, "--measured", "{shape}"), 2, r"not a `solar validate --json` output nor a KernelBench timing file"),
    Case("measured-variant-missing", (*_BASE, "--measured", "eager={missing}"), 2, r"cannot read measured file"),
]
# fmt: on


def _fill(text: str, paths: dict[str, str]) -> str:
    return text.format(**paths)


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.name)
def test_bad_flags_are_one_line_before_anything_starts(case, tmp_path, capsys, monkeypatch):
    def started(*args, **kwargs):
        raise AssertionError("the run started although a flag is bad")

    monkeypatch.setattr(kernelbench_cli, "run_analysis", started)
    monkeypatch.setattr(kernelbench_cli, "measure_suite", started)
    paths = _paths(tmp_path)
    code = main([_fill(case.root, paths), *(_fill(a, paths) for a in case.argv)])
    err = capsys.readouterr().err
    assert code == case.code, err
    assert err.count("\n") == 1 and err.startswith("solar: error: "), err
    assert re.search(case.pattern, err.removeprefix("solar: error: ")), err
    assert not Path(paths["out"]).exists()  # nothing written


# fmt: off
RUNS = [
    # (name, how OUT/results.jsonl starts, the suite's files, expected {problem: status})
    ("results-binary", bytes(range(256)) * 8, {}, {"level1/1_ReLU.py": "ok"}),
    ("results-torn-and-nested", b'{"problem": "level1/1_Re\n' + b"[" * 50_000 + b"\n", {}, {"level1/1_ReLU.py": "ok"}),
    ("problem-binary", None, {"level1/2_Bin.py": bytes(range(256))}, {"level1/1_ReLU.py": "ok", "level1/2_Bin.py": "error"}),
    ("problem-empty", None, {"level1/2_Empty.py": b""}, {"level1/1_ReLU.py": "ok", "level1/2_Empty.py": "error"}),
    ("problem-folder-named-py", None, {"level1/2_Dir.py/x": b""}, {"level1/1_ReLU.py": "ok"}),
]
# fmt: on


@pytest.mark.parametrize(("name", "results", "files", "expected"), RUNS, ids=[r[0] for r in RUNS])
def test_odd_files_in_a_run_cost_at_most_their_rows(tmp_path, capsys, name, results, files, expected):
    root = write_suite(tmp_path / "suite", {"level1/1_ReLU.py": RELU})
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    out = tmp_path / "out"
    if results is not None:
        out.mkdir()
        (out / RESULTS_FILE).write_bytes(results)
    assert main([str(root), "--arch", "H100-SXM", "--out", str(out), "--jobs", "2"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if results is not None:  # what is not a row is set aside, said in one line, never dropped
        bad = [line for line in results.split(b"\n") if line.strip()]
        assert (out / BAD_FILE).read_bytes() == b"".join(line + b"\n" for line in bad)
        assert f"note: {len(bad)} unreadable lines of {out / RESULTS_FILE} moved to {out / BAD_FILE}\n" in err
    rows = read_rows(out / RESULTS_FILE)[0]
    assert {p: r.status for (p, _), r in rows.items()} == expected
    for row in rows.values():
        assert row.error is None or "\n" not in row.error


def test_the_real_entry_point_refuses_a_nan_timeout_in_one_line(tmp_path):
    paths = _paths(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "solar.kernelbench", paths["root"], *_ARCH, "--out", paths["out"]]
        + ["--timeout", "nan"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("solar: error: --timeout must be") and done.stderr.count("\n") == 1
