"""benchmarks/multigpu_measure.py: its plan and bounds (dry run), and a real run of every collective
on two CPU ranks over gloo writing one row per measurement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "multigpu_measure.py"
KINDS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"]


def _run(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, timeout=300, env=env, check=False)


DRY = [  # (kind, S, bound on 8xH100-SXM: bytes per GPU / (450 + 50) GB/s + 0.5 us)
    ("all_reduce", 4096, 4096 / 500e9 + 0.5e-6),
    ("all_gather", 4096, 4096 * 7 / 8 / 500e9 + 0.5e-6),
    ("send_recv", 16384, 16384 / 500e9 + 0.5e-6),
]


def test_dry_run_plan_and_bounds():
    done = _run("--dry-run", "--world", "8", "--system", "8xH100-SXM", "--max-bytes", "16384", "--examples")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["kind"], r["bytes"]) for r in rows] == [(k, s) for k in KINDS for s in (4096, 16384)]
    by = {(r["kind"], r["bytes"]): r["bound_seconds"] for r in rows}
    for kind, s, bound in DRY:
        assert by[(kind, s)] == pytest.approx(bound, rel=1e-12)


def test_gloo_run_writes_a_row_per_measurement(tmp_path):
    out = tmp_path / "rows.jsonl"
    done = _run(
        "--spawn", "2", "--backend", "gloo", "--max-bytes", "16384", "--examples", "--warmup", "1",
        "--iters", "2", "--system", "2xL4-PCIe", "--out", str(out),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["kind"], r["bytes"], r["world"]) for r in rows] == [(k, s, 2) for k in KINDS for s in (4096, 16384)]
    for r in rows:
        assert r["env"]["backend"] == "gloo" and r["env"]["world"] == 2
        if "error" not in r:
            assert r["seconds"] > 0 and r["violation"] is False
            factor = {"all_reduce": 1, "send_recv": 1}.get(r["kind"], 0.5)  # 2(n-1)/n and (n-1)/n at n = 2
            assert r["busbw_bytes_per_s"] == pytest.approx(r["algbw_bytes_per_s"] * factor)


def test_rank0_alone_then_join_prices_the_same_rank_program(tmp_path):
    out = tmp_path / "rank0.jsonl"
    done = _run("--rank0", "8", "--warmup", "0", "--iters", "1", "--examples", "examples/distributed/tp_mlp.py",
                "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert (row["example"], row["world"], row["rank"], row["small"], row["env"]["backend"]) == (
        "examples/distributed/tp_mlp.py", 8, 0, False, "fake")
    done = _run("--join", str(out), "--arch", "H100-SXM")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    joined = json.loads(done.stdout.splitlines()[0])
    assert joined["bound_seconds"] > 0 and joined["violation"] is False  # a CPU is far slower than an H100's bound
    assert done.stdout.splitlines()[-1] == "1 timing(s), 0 violation(s)"


def test_every_example_runs_alone_at_its_verify_sizes(tmp_path):
    from benchmarks.multigpu_measure import EXAMPLES, has_verify_sizes

    out = tmp_path / "small.jsonl"
    done = _run("--rank0", "8", "--small", "--warmup", "0", "--iters", "1", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    present = [e for e in EXAMPLES if (ROOT / e).is_file()]
    small = [e for e in present if has_verify_sizes(e)]
    assert {"examples/distributed/tp_mlp.py", "examples/distributed/dp_train_step.py"} <= set(small)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["example"], r["world"], r["small"]) for r in rows] == [(e, EXAMPLES[e] or 8, True) for e in small]
    assert [r.get("error") for r in rows] == [None] * len(rows) and all(r["seconds"] > 0 for r in rows)
    notes = [f"note: {e} is not in this checkout; skipped" for e in EXAMPLES if e not in present]
    notes += [f"note: {e} has no get_verify_inputs(); skipped at --small" for e in present if e not in small]
    assert sorted(done.stderr.splitlines()) == sorted(notes)
    done = _run("--join", str(out), "--arch", "H100-SXM")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == f"{len(rows)} timing(s), 0 violation(s)"


def test_the_committed_h100_rank0_timings_stay_above_their_bounds():
    """Rank 0's program of each sharded example timed alone on an H100 (benchmarks/results/h100/rank0.jsonl):
    none below the fused bound of the same rank program on H100-SXM."""
    done = _run("--join", str(ROOT / "benchmarks" / "results" / "h100" / "rank0.jsonl"), "--arch", "H100-SXM")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [Path(r["example"]).name for r in rows] == ["tp_mlp.py", "tp_decoder_layer.py", "moe_ep.py"]
    assert [r["violation"] for r in rows] == [False, False, False]
    assert min(r["seconds"] / r["bound_seconds"] for r in rows) == pytest.approx(2.0382, abs=5e-4)  # moe_ep
