"""`solar definitions` end to end on a tiny folder: the runner's isolated workers, bounds.jsonl with
every level per (definition, workload, GPU), the kernelbench report files, scores and violations."""

from __future__ import annotations

import csv
import json

import pytest

from solar.cli import main

DEFINITION = {
    "name": "scale_add_h64", "op_type": "elementwise",
    "axes": {"T": {"type": "var"}, "H": {"type": "const", "value": 64}},
    "inputs": {"x": {"shape": ["T", "H"], "dtype": "float16"}, "y": {"shape": ["T", "H"], "dtype": "float16"},
               "alpha": {"shape": None, "dtype": "float32"}},
    "outputs": {"z": {"shape": ["T", "H"], "dtype": "float16"}},
    "reference": "import torch\n\ndef run(x, y, alpha):\n    return x * alpha + y\n",
}
WORKLOADS = [{"uuid": f"w{t}", "axes": {"T": t}, "inputs": {"alpha": {"type": "scalar", "value": 0.5}}} for t in (8, 4096)]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("defs")
    (root / "scale_add").mkdir()
    (root / "scale_add" / "definition.json").write_text(json.dumps(DEFINITION))
    (root / "scale_add" / "workload.jsonl").write_text("".join(json.dumps(w) + "\n" for w in WORKLOADS))
    out = tmp_path_factory.mktemp("out")
    measured = out.parent / "measured.jsonl"
    measured.write_text(
        json.dumps({"definition": "scale_add_h64", "workload": "w8", "arch": "B200", "kernel_seconds": 1e-9, "baseline_seconds": 1e-5}) + "\n"
        + json.dumps({"definition": "scale_add_h64", "workload": {"uuid": "w4096"}, "evaluation": {"status": "PASSED",
                      "performance": {"latency_ms": 0.004, "reference_latency_ms": 0.008}, "environment": {"hardware": "NVIDIA B200"}}}) + "\n"
    )
    argv = ["definitions", str(root), "--arch", "B200", "H100-SXM", "--clock-mhz", "1500", "--out", str(out), "--jobs", "2"]
    code = main([*argv, "--measured", str(measured)])
    return out, code, argv


def test_one_line_per_definition_workload_and_gpu_with_every_level(run):
    out, code, _ = run
    lines = [json.loads(x) for x in (out / "bounds.jsonl").read_text().splitlines()]
    assert [(x["workload"], x["arch"], x["status"]) for x in lines] == [
        ("w4096", "B200", "ok"), ("w8", "B200", "ok"), ("w4096", "H100-SXM", "ok"), ("w8", "H100-SXM", "ok")]
    big = lines[0]
    assert big["axes"] == {"H": 64, "T": 4096} and {"fused", "unfused", "cache_aware"} <= set(big["bounds"])
    assert big["totals"]["dram_bytes"] == 3 * 4096 * 64 * 2 and big["totals"]["flops"] == 2 * 4096 * 64
    assert big["flags"] == ["--clock-mhz", "1500"]
    assert (out / "problems" / "scale_add_h64" / "w8.py").is_file()
    for name in ("summary.json", "results.csv", "report.html", "scores.csv"):
        assert (out / name).is_file()


def test_scores_and_the_violation(run):
    out, code, _ = run
    assert code == 1  # the 1 ns kernel is below every bound
    rows = {r["workload"]: r for r in csv.DictReader((out / "scores.csv").open())}
    assert rows["w8"]["violation"] == "True"
    big = json.loads((out / "bounds.jsonl").read_text().splitlines()[0])
    t_sol = max(big["bounds"]["fused"]["seconds"], big["bounds"]["cache_aware"]["seconds"])
    assert float(rows["w4096"]["score"]) == pytest.approx(1 / (1 + (4e-6 - t_sol) / (8e-6 - t_sol)))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scores"][0]["violations"] == 1 and summary["definitions"] == ["scale_add_h64"]
    assert "SOL scores" in (out / "report.html").read_text()


def test_a_rerun_resumes_and_bad_input_is_one_line(run, tmp_path, capsys):
    out, _, argv = run
    assert main(argv) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "bounded 0 workloads" in err and "4 (workload, GPU) pairs already done" in err
    assert main([*argv[:-2], "--jobs", "1", "--definitions", "nothing*"]) == 2
    assert "no definitions named like 'nothing*'" in capsys.readouterr().err
