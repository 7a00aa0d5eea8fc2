"""The definition + workload loader (no torch): axes, shapes, constraints, layouts, and one-line errors
for malformed files; the SOL score formula."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solar.definitions.schema import DefinitionError, axis_values, evaluate, parse_definition, parse_workloads
from solar.definitions.scores import MeasuredError, Timing, load_timings, per_definition, score, score_rows
from solar.definitions.suite import cases, find_definitions, harness

GQA = {
    "name": "gqa_hr4", "op_type": "gqa",
    "axes": {"B": {"type": "var"}, "H_kv": {"type": "var"}, "H_r": {"type": "const", "value": 4},
             "H_qo": {"type": "expr", "expression": "H_kv * H_r"}, "D": {"type": "const", "value": 8}},
    "constraints": ["H_qo == H_kv * H_r", "B <= 64"],
    "inputs": {"q": {"shape": ["B", "H_qo", "D"], "dtype": "float16"}, "scale": {"shape": None, "dtype": "float32"}},
    "outputs": {"out": {"shape": ["B", "H_qo", "D"], "dtype": "float16"}},
    "reference": "import torch\n\ndef run(q, scale):\n    return q * scale\n",
}


def _definition(**changes):
    data = {**GQA, **changes}
    return parse_definition(json.dumps(data), Path("d/definition.json"))


def test_expr_axes_and_constraints_are_evaluated_per_workload():
    d = _definition()
    [w] = parse_workloads('{"uuid": "w1", "axes": {"B": 2, "H_kv": 3}, "inputs": {"scale": {"type": "scalar", "value": 0.5}}}', Path("w.jsonl"), d)
    assert axis_values(d, w) == {"H_r": 4, "D": 8, "B": 2, "H_kv": 3, "H_qo": 12}
    assert w.source("q").kind == "random" and w.source("scale").value == 0.5
    [bad] = parse_workloads('{"uuid": "w2", "axes": {"B": 65, "H_kv": 1}, "inputs": {"scale": {"type": "scalar", "value": 1}}}', Path("w.jsonl"), d)
    with pytest.raises(DefinitionError, match=r"constraint 'B <= 64' does not hold \(B=65\)"):
        axis_values(d, bad)


def test_a_trace_line_holds_its_workload_and_must_name_this_definition():
    d = _definition()
    line = {"definition": "gqa_hr4", "workload": {"uuid": "t", "axes": {"B": 1, "H_kv": 1}, "inputs": {"scale": {"type": "scalar", "value": 1}}}, "solution": None}
    assert parse_workloads(json.dumps(line), Path("w.jsonl"), d)[0].uuid == "t"
    with pytest.raises(DefinitionError, match=r"w.jsonl:1: a workload of definition 'other'"):
        parse_workloads(json.dumps({**line, "definition": "other"}), Path("w.jsonl"), d)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"axes": {"B": {"type": "size"}}}, r"axes.B: type 'size' is not one of const, var, expr"),
        ({"axes": {"B": {"type": "const"}}}, r"axes.B: no 'value'"),
        ({"inputs": {"q": {"shape": ["Z"], "dtype": "float16"}}}, r"shape names axis 'Z', which 'axes' does not define"),
        ({"inputs": {"q": {"shape": ["B"], "dtype": "float13"}}}, r"dtype 'float13' is not one of"),
        ({"reference": "def go(q):\n    return q\n"}, r"defines no global function run"),
        ({"reference": "def run(q:\n"}, r"reference, line 1"),
        ({"custom_inputs_entrypoint": "make"}, r"custom_inputs_entrypoint 'make' is not a function"),
        ({"name": 3}, r"'name' must be str, got int"),
    ],
)
def test_malformed_definitions_are_one_line_errors(changes, message):
    with pytest.raises(DefinitionError, match=message):
        _definition(**changes)


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"uuid": "a", "axes": {"B": 1}}', r"no value for var axis 'H_kv'"),
        ('{"uuid": "a", "axes": {"B": 1, "H_kv": 1, "D": 4}}', r"axes.D is a const axis"),
        ('{"uuid": "a", "axes": {"B": -1, "H_kv": 1}}', r"axes.B must be a size"),
        ('{"uuid": "a", "axes": {"B": 1, "H_kv": 1}, "inputs": {"q": {"type": "custom"}}}', r"names no custom_inputs_entrypoint"),
        ('{"uuid": "a", "axes": {"B": 1, "H_kv": 1}, "inputs": {"scale": {"type": "random"}}}', r"inputs.scale is a scalar"),
        ('{"uuid": "a", "axes": {"B": 1, "H_kv": 1}, "inputs": {"k": {"type": "random"}, "scale": {"type": "scalar", "value": 1}}}', r"inputs.k is no input"),
        ('{"uuid": "a", "axes": {"B": 1, "H_kv": 1}}', r"inputs.scale: a scalar needs a numeric 'value'"),
        ('{"uuid": "a", "axes": {"B": 1, "H_kv": 1}, "inputs": {"scale": {"type": "scalar", "value": 1}}}\n' * 2, r":2: uuid 'a' repeats"),
        ("[1]", r"expected a JSON object"),
        ("", r"no workloads"),
    ],
)
def test_malformed_workloads_are_one_line_errors(line, message):
    with pytest.raises(DefinitionError, match=message):
        parse_workloads(line, Path("w.jsonl"), _definition())


def test_axis_expressions_allow_arithmetic_only():
    assert evaluate("(a + 1) * b // 2 - a % 2 + 2 ** a", {"a": 3, "b": 4}, "x") == 8 - 1 + 8
    with pytest.raises(DefinitionError, match=r"uses Call"):
        evaluate("__import__('os')", {}, "x")
    with pytest.raises(DefinitionError, match=r"names 'c', which is no axis"):
        evaluate("c + 1", {"a": 1}, "x")


def _write(folder: Path, definition: dict, lines: list[dict]) -> None:
    folder.mkdir(parents=True)
    (folder / "definition.json").write_text(json.dumps(definition))
    (folder / "workload.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_both_layouts_are_found_and_one_name_holds_one_definition(tmp_path):
    w = {"uuid": "u/1", "axes": {"B": 1, "H_kv": 2}, "inputs": {"scale": {"type": "scalar", "value": 2.0}}}
    _write(tmp_path / "a" / "gqa", GQA, [w])
    trace = tmp_path / "b"
    (trace / "definitions" / "gqa").mkdir(parents=True)
    (trace / "workloads" / "gqa").mkdir(parents=True)
    (trace / "definitions" / "gqa" / "gqa_hr4.json").write_text(json.dumps(GQA))
    (trace / "workloads" / "gqa" / "gqa_hr4.jsonl").write_text(json.dumps({"definition": "gqa_hr4", "workload": w}) + "\n")
    for root in (tmp_path / "a", trace, tmp_path / "a" / "gqa"):
        [case] = cases(find_definitions(root))
        assert case.rel == "gqa_hr4/u_1.py" and case.axes["H_qo"] == 8
    _write(tmp_path / "a" / "again", GQA, [w])  # the same definition and workloads: read once
    [entry] = find_definitions(tmp_path / "a")
    assert entry.copies == (tmp_path / "a" / "gqa" / "definition.json",)
    _write(tmp_path / "a" / "other", {**GQA, "constraints": []}, [w])
    with pytest.raises(DefinitionError, match=r"other/definition\.json: definition 'gqa_hr4' is also in .*again/definition\.json, with other definitions"):
        find_definitions(tmp_path / "a")
    text = harness(case)
    assert text.startswith(GQA["reference"].rstrip("\n"))  # the reference keeps its line numbers
    assert "return run(in0, 2.0)" in text and "_solar_tensor((1, 8, 8), 'float16')" in text


def test_the_score_is_one_at_the_speed_of_light_and_a_half_at_the_baseline():
    assert score(1.0, 3.0, 1.0) == 1.0
    assert score(3.0, 3.0, 1.0) == 0.5
    assert score(2.0, 1.0, 1.0) is None  # a baseline at T_SOL gives no score


def test_scores_flag_violations_and_suspicious_kernels(tmp_path):
    rows = [{"definition": "d", "workload": w, "arch": "B200", "status": "ok",
             "bounds": {"fused": {"seconds": 1e-6}, "cache_aware": {"seconds": 2e-6}, "unfused": {"seconds": 9e-6}}}
            for w in ("w1", "w2", "w3")]
    timings = [Timing("d", "w1", "B200", 1.5e-6, 6e-6, "f"), Timing("d", "w2", "B200", 2.2e-6, 6e-6, "f"),
               Timing("d", "w3", "B200", 4e-6, 6e-6, "f"), Timing("d", "zz", "B200", 1.0, None, "f")]
    scores, unmatched = score_rows(rows, timings)
    by = {s.workload: s for s in scores}
    assert by["w1"].sol_level == "cache_aware" and by["w1"].violation and "bug in solar" in by["w1"].note
    assert by["w2"].suspicious and not by["w2"].violation
    assert by["w3"].score == pytest.approx(1 / (1 + 2 / 4)) and by["w3"].headroom == pytest.approx(2.0)
    assert [t.workload for t in unmatched] == ["zz"]
    [agg] = per_definition(scores)
    assert agg["violations"] == 1 and agg["suspicious"] == 1 and agg["workloads"] == 3


def test_measured_traces_and_flat_records_are_read(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"definition": "d", "workload": {"uuid": "w"}, "evaluation": {"status": "PASSED",
                    "performance": {"latency_ms": 0.008, "reference_latency_ms": 0.019},
                    "environment": {"hardware": "NVIDIA_B200"}}}) + "\n"
        + json.dumps({"definition": "d", "workload": {"uuid": "x"}, "evaluation": {"status": "TIMEOUT"}}) + "\n"
        + json.dumps({"definition": "d", "workload": "v", "arch": "H200", "kernel_seconds": 2e-6}) + "\n"
    )
    a, b = load_timings(str(path))
    assert (a.workload, a.arch, a.kernel_seconds, a.baseline_seconds) == ("w", "B200", 8e-6, 1.9e-5)
    assert (b.arch, b.baseline_seconds) == ("H200-SXM", None)
    (tmp_path / "e.jsonl").write_text('{"definition": "d"}\n')
    with pytest.raises(MeasuredError, match=r"no record with a definition"):
        load_timings(str(tmp_path / "e.jsonl"))
