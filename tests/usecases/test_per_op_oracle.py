"""The H200 per-op kernel times (benchmarks/results/h200/per_op.jsonl, benchmarks/measure_ops.py) as
an oracle for the per-op bounds in context (docs/BOUNDS.md §19): no joined op ran faster than its
bound. The bounds are recorded by benchmarks/per_op_join.py (KernelBench's sources are not
committed); one committed corpus model is re-joined here so the record cannot drift from the code."""

from __future__ import annotations

import pytest

from benchmarks.rows import RESULTS, ROOT, read_rows
from solar.api import load
from solar.api import join_measured_ops

def _rows(name: str) -> dict[str, dict]:
    return {r["problem"]: r for r in read_rows(RESULTS / name)}


MEASURED = _rows("per_op.jsonl")
RECORDED = _rows("per_op_bounds.jsonl")


def test_the_record_covers_the_runs():
    assert set(RECORDED) == set(MEASURED) and len(RECORDED) >= 17
    assert sum(len(r["ops"]) for r in RECORDED.values()) >= 1400
    # every profiled op of the KernelBench problems and torchvision models joins a traced call
    exact = [p for p in RECORDED if not p.startswith("models/hf_")]
    assert all(RECORDED[p]["unmatched_measured"] == RECORDED[p]["unmatched_calls"] == 0 for p in exact)


@pytest.mark.parametrize("problem", sorted(RECORDED))
def test_no_op_ran_below_its_bound(problem):
    rec, row = RECORDED[problem], MEASURED[problem]
    beaten = []
    for op in rec["ops"]:
        measured = row["ops"][op["profiled_index"]]
        assert measured["kernel_seconds"] == op["measured_seconds"]
        assert measured["op"].removeprefix("aten::") == op["op"].split(".")[1]
        if op["bound_seconds"] > op["measured_seconds"]:
            beaten.append(f"{op['op']} #{op['index']}: bound {op['bound_seconds'] * 1e6:.3f} µs > "
                          f"measured {op['measured_seconds'] * 1e6:.3f} µs")
    assert not beaten and rec["violations"] == []
    assert rec["unattributed_bound_seconds"] <= rec["unattributed_seconds"] + 1e-12 or rec["unattributed_bound_seconds"] == 0


def test_the_record_is_what_the_code_gives_now():
    problem = "models/tv_resnet18_fp32.py"
    mo = join_measured_ops(load(str(ROOT / "benchmarks" / problem)), "H200-SXM", MEASURED[problem])
    now = {(o.index, o.profiled_index): o.bound_seconds for o in mo.ops}
    assert now == {(o["index"], o["profiled_index"]): o["bound_seconds"] for o in RECORDED[problem]["ops"]}
